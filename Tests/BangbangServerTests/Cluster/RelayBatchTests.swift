// One loop turn's frames for a gateway: a shared message becomes one deliver for all its
// recipients, and no connection ever receives its messages out of order.
import RelayProtocol
import Testing
import WebSocketProtocol
import WebSocketServer
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct RelayBatchTests {
    let feed1 = SharedMessage(text: Array("feed-1".utf8))
    let feed2 = SharedMessage(text: Array("feed-2".utf8))

    @Test func aSharedMessageForManyConnectionsIsOneDeliver() {
        var batch = RelayBatch()
        for id: UInt64 in [1, 2, 3] { batch.deliver(feed1, to: id) }
        #expect(batch.frames == [.deliver(connections: [1, 2, 3], text: Array("feed-1".utf8))])
    }

    @Test func corkedBatchesOfSeveralMessagesStillMerge() {
        // LoopRegistry hands each watcher the whole feed batch in turn: 1:f1 1:f2 2:f1 2:f2.
        var batch = RelayBatch()
        for id: UInt64 in [1, 2] {
            batch.deliver(feed1, to: id)
            batch.deliver(feed2, to: id)
        }
        #expect(batch.frames == [.deliver(connections: [1, 2], text: Array("feed-1".utf8)),
                                 .deliver(connections: [1, 2], text: Array("feed-2".utf8))])
    }

    @Test func aConnectionWithSomethingLaterStartsANewFrame() {
        var batch = RelayBatch()
        batch.deliver(feed1, to: 1)
        batch.deliver(Array("reply".utf8), to: 2)
        // Joining frame 0 would put feed-1 before connection 2's reply, which was sent first.
        batch.deliver(feed1, to: 2)
        batch.deliver(feed1, to: 3)
        #expect(batch.frames == [.deliver(connections: [1], text: Array("feed-1".utf8)),
                                 .deliver(connections: [2], text: Array("reply".utf8)),
                                 .deliver(connections: [2, 3], text: Array("feed-1".utf8))])
    }

    @Test func aCloseStaysBehindWhatWasSentBeforeIt() {
        var batch = RelayBatch()
        batch.deliver(feed1, to: 1)
        batch.close(1, code: .policyViolation, reason: "flood")
        batch.deliver(feed1, to: 2)
        #expect(batch.frames == [.deliver(connections: [1, 2], text: Array("feed-1".utf8)),
                                 .closeConnection(connection: 1, code: 1008, reason: "flood")])
    }
}
