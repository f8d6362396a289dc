// info.get: answered before login, from configuration and the order rules.
import BangbangCore
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct InfoOperationsTests {
    @Test func infoIsPublicAndQuotesTheConfiguredLimitsAndRules() async throws {
        let harness = try SessionHarness()
        let app = harness.application.app!
        let reply = try #require(await harness.call("info.get"))
        #expect(reply.isSuccess)
        let data = try #require(reply["data"])
        #expect(data["version"] == .string(InfoOperations.serverVersion))
        #expect(data["campuses"] == .array(app.configuration.campuses.map(JSONValue.string)))
        #expect(data["limits"]?["max_message_bytes"] == .integer(Int64(app.configuration.maxMessageBytes)))
        #expect(data["limits"]?["max_tip"] == .integer(app.orderRules.maximumTip))
        #expect(data["order_rules"]?["cancel_fee"] == .integer(app.orderRules.cancellationFee))
        #expect(data["order_types"]?.arrayCount == OrderType.allCases.count)
    }

    @Test func anUnknownFieldIsAnInvalidFieldNamingIt() async throws {
        let harness = try SessionHarness()
        let reply = try #require(await harness.call("info.get", #"{"verbose":true}"#))
        #expect(reply.errorCode == "invalid_field")
        #expect(reply["error"]?["field"] == .string("verbose"))
    }
}

extension JSONValue {
    var arrayCount: Int? {
        if case .array(let items) = self { return items.count }
        return nil
    }
}
