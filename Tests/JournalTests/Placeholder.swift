import Testing
@testable import Journal
