import Testing
@testable import WebSocketProtocol
