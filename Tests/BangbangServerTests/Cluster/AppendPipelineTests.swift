// The ordering and fencing of a partition owner's appends, without NATS: what StreamJournal
// publishes for each append, and which completions it releases, in which order, for every way
// the stream can answer.
import Testing
@testable import BangbangServer

@Suite struct AppendPipelineTests {
    typealias Pipeline = AppendPipeline<Int>

    /// Starts `count` appends (completions named by their index) and returns their sequences.
    func start(_ count: Int, on pipeline: inout Pipeline, from first: Int = 0) -> [UInt64] {
        (first..<(first + count)).map { index in
            let (start, refused) = pipeline.start(index)
            #expect(refused == nil)
            guard case .publish(let expected, let sequence, _) = start else {
                Issue.record("append \(index) refused")
                return 0
            }
            #expect(sequence == expected + 1)
            return sequence
        }
    }

    @Test func eachAppendIsFencedOnTheSequenceThePreviousOneWillGetAndAfterTheFirstOnItsOwnPredecessor() {
        var pipeline = Pipeline(after: 41)
        var fences: [UInt64] = []
        var followsOwn: [Bool] = []
        for index in 0..<4 {
            if case .publish(let expected, _, let follows) = pipeline.start(index).0 {
                fences.append(expected)
                followsOwn.append(follows)
            }
        }
        #expect(fences == [41, 42, 43, 44])
        #expect(followsOwn == [false, true, true, true], "only the first append after recovery follows another node's record")
        #expect(pipeline.lastAssigned == 45)
        #expect(pipeline.inFlightCount == 4)
    }

    @Test func completionsAreReleasedInSequenceOrderWhateverOrderTheAnswersCome() {
        var pipeline = Pipeline(after: 0)
        let sequences = start(4, on: &pipeline)
        #expect(sequences == [1, 2, 3, 4])
        var order: [Int] = []
        for sequence in [3, 2, 4] as [UInt64] {
            let (released, failure) = pipeline.answer(.stored(at: sequence), for: sequence)
            #expect(released.isEmpty && failure == nil)
        }
        let (released, failure) = pipeline.answer(.stored(at: 1), for: 1)
        #expect(failure == nil)
        order = released.map(\.completion)
        #expect(order == [0, 1, 2, 3])
        #expect(released.map(\.sequence) == [1, 2, 3, 4])
        #expect(pipeline.inFlightCount == 0)
    }

    @Test func aFencedAppendFailsItselfAndEveryLaterOneAndIsReportedOnce() {
        var pipeline = Pipeline(after: 10)
        _ = start(3, on: &pipeline)
        let first = pipeline.answer(.stored(at: 11), for: 11)
        #expect(first.released.map(\.sequence) == [11] && first.newFailure == nil)
        // The later one is answered first: stored (a stale owner's luck), but held behind 12.
        let third = pipeline.answer(.stored(at: 13), for: 13)
        #expect(third.released.isEmpty)
        let second = pipeline.answer(.failed("fenced"), for: 12)
        #expect(second.newFailure == "append 12 failed: fenced")
        #expect(second.released.map(\.completion) == [1, 2])
        #expect(second.released.allSatisfy { $0.sequence == nil })
        // Every append started afterwards is refused at once, and the failure is not reported again.
        let (start, refused) = pipeline.start(9)
        guard case .refuse = start else {
            Issue.record("an append after a fence was published")
            return
        }
        #expect(refused?.completion == 9 && refused?.sequence == nil)
        #expect(pipeline.failure == "append 12 failed: fenced")
    }

    @Test func anAcknowledgementAtAnotherSequenceIsAFailure() {
        var pipeline = Pipeline(after: 0)
        _ = start(2, on: &pipeline)
        let (released, failure) = pipeline.answer(.stored(at: 7), for: 1)
        #expect(failure == "append 1 was stored as 7")
        #expect(released.map(\.sequence) == [nil])
        let later = pipeline.answer(.stored(at: 2), for: 2)
        #expect(later.newFailure == nil && later.released.map(\.sequence) == [nil])
    }

    @Test func afterCloseNewAppendsAreRefusedAndThoseInFlightStillComplete() {
        var pipeline = Pipeline(after: 5)
        _ = start(1, on: &pipeline)
        pipeline.close("the journal is closed")
        guard case .refuse = pipeline.start(1).0 else {
            Issue.record("an append after close was published")
            return
        }
        let (released, failure) = pipeline.answer(.stored(at: 6), for: 6)
        #expect(failure == nil && released.map(\.completion) == [0])
    }
}
