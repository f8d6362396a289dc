// order.*: reading and acting on one order through a session.
import BangbangCore
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct OrderOperationsTests {
    /// A logged-in session, a bounty someone else published, and that order's wire id.
    static func sessionAndOthersBounty() async throws -> (SessionHarness, JSONValue) {
        let harness = try SessionHarness()
        let publisher = try await harness.application.logIn("+8613900004001")
        _ = try await harness.application.publish(Drafts.bounty(now: harness.application.clock.now), by: publisher)
        #expect(try await harness.logIn("+8613900004002").isSuccess)
        let list = try #require(await harness.call("board.list", #"{"types":["bounty"]}"#))
        guard case .array(let orders)? = list["data"]?["orders"], let id = orders.first?["id"] else {
            throw SessionHarnessError(message: "no order on the board: \(list)")
        }
        return (harness, id)
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.encode(value), as: UTF8.self)
    }

    @Test func getReturnsTheOrderAndAnUnknownOneIsNotFound() async throws {
        let (harness, id) = try await Self.sessionAndOthersBounty()
        let reply = try #require(await harness.call("order.get", #"{"order_id":\#(Self.text(id))}"#))
        #expect(reply.isSuccess, "\(reply)")
        #expect(reply["data"]?["order"]?["id"] == id, "\(reply)")
        #expect(reply["data"]?["order"]?["status"] == .string("open"))
        let missing = try #require(await harness.call("order.get", #"{"order_id":999999999}"#))
        #expect(!missing.isSuccess)
        #expect(missing.errorCode == "not_found", "\(missing)")
    }

    @Test func anUnverifiedRunnerCannotAccept() async throws {
        let (harness, id) = try await Self.sessionAndOthersBounty()
        let reply = try #require(await harness.call("order.accept", #"{"order_id":\#(Self.text(id))}"#))
        #expect(reply.errorCode == "runner_not_verified", "\(reply)")
        let after = try #require(await harness.call("order.get", #"{"order_id":\#(Self.text(id))}"#))
        #expect(after["data"]?["order"]?["status"] == .string("open"), "a refused accept changes nothing")
    }

    @Test func onlyThePublisherMayCancel() async throws {
        let (harness, id) = try await Self.sessionAndOthersBounty()
        let reply = try #require(await harness.call("order.cancel", #"{"order_id":\#(Self.text(id))}"#))
        #expect(!reply.isSuccess, "\(reply)")
        #expect(await harness.application.order(try #require(harness.orderID(id)))?.status == .open)
    }

    @Test func aPublishWithAMissingFieldIsRefusedBeforeAnyShardSeesIt() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900004003").isSuccess)
        let reply = try #require(await harness.call("order.publish", #"{"type":"bounty"}"#))
        #expect(reply.errorCode == "invalid_field", "\(reply)")
        let shards = await harness.application.shardStates()
        #expect(shards.allSatisfy { $0.orders.isEmpty })
    }
}

extension SessionHarness {
    /// The order a wire id names, found on the shards.
    func orderID(_ wire: JSONValue) async -> OrderID? {
        for shard in await application.shardStates() {
            if let order = shard.orders.values.first(where: { JSONValue.integer(Int64($0.id.rawValue)) == wire }) { return order.id }
        }
        return nil
    }
}
