import Testing
@testable import BangbangCore
