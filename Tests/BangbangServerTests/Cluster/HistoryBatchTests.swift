// The history stream's messages without NATS: orders round-trip in order, split by size, and
// anything that is not a whole message is refused, never half read and never a crash.
import Testing
import TestSupport
@testable import BangbangApplication
@testable import Cluster
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct HistoryBatchTests {
    func orders(_ sizes: [Int]) -> [[UInt8]] {
        sizes.enumerated().map { index, size in (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) } }
    }

    @Test func ordersRoundTripInOrderAcrossMessagesOfBoundedSize() throws {
        var random = SeededGenerator(seed: 14)
        for _ in 0..<200 {
            let sizes = (0..<Int.random(in: 0...40, using: &random)).map { _ in Int.random(in: 0...900, using: &random) }
            let input = orders(sizes)
            let messages = HistoryBatch.encode(input, targetBytes: 2_000)
            #expect(try messages.flatMap { try HistoryBatch.decode($0) } == input)
            for message in messages {
                let held = try HistoryBatch.decode(message)
                #expect(!held.isEmpty)
                #expect(message.count <= 2_000 || held.count == 1, "a message over the target holds one order")
            }
        }
        #expect(HistoryBatch.encode([]).isEmpty)
        // An order larger than the target travels alone.
        let big = orders([5_000, 10, 10])
        #expect(try HistoryBatch.encode(big, targetBytes: 2_000).map { try HistoryBatch.decode($0).count } == [1, 2])
    }

    @Test func everyTruncationAndEveryLieIsRefused() throws {
        let message = try #require(HistoryBatch.encode(orders([3, 0, 7])).first)
        for length in 0..<message.count {
            #expect(throws: HistoryBatch.Malformed.self) { try HistoryBatch.decode(Array(message.prefix(length))) }
        }
        #expect(throws: HistoryBatch.Malformed.self) { try HistoryBatch.decode(message + [0]) }
        var otherVersion = message
        otherVersion[2] = 2
        #expect(throws: HistoryBatch.Malformed(reason: "history batch version 2")) { try HistoryBatch.decode(otherVersion) }
        // A count far beyond what the bytes could hold is refused before anything is reserved.
        let lying: [UInt8] = HistoryBatch.magic + [HistoryBatch.version, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(throws: HistoryBatch.Malformed.self) { try HistoryBatch.decode(lying) }
        #expect(throws: HistoryBatch.Malformed.self) { try HistoryBatch.decode(Array("not a batch".utf8)) }
    }

    @Test func mutatedMessagesDecodeOrAreRefusedNeverCrash() {
        var random = SeededGenerator(seed: 15)
        let message = HistoryBatch.encode(orders([40, 1, 300, 0, 12])).first!
        for _ in 0..<20_000 {
            let mutated = random.damaged(message, changes: 4)
            if let decoded = try? HistoryBatch.decode(mutated) {
                #expect(decoded.reduce(0) { $0 + 4 + $1.count } + 7 == mutated.count)
            }
        }
    }
}
