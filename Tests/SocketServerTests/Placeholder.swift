import Testing
@testable import SocketServer
