import Testing
@testable import BangbangServer
