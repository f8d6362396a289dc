// The ordering and fencing of a partition owner's appends, without NATS: what StreamJournal
// publishes for each append, and which completions it releases, in which order, for every way
// the stream can answer.
import Testing
@testable import BangbangApplication
@testable import Cluster
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

extension AppendPipeline {
    /// An answer outside any retry: the completions due and the failure when it is new.
    mutating func answer(_ answer: Answer, for sequence: UInt64) -> (released: [Release], newFailure: String?) {
        let step = self.answer(answer, for: sequence, now: .now)
        return (step.released, step.newFailure)
    }
}

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

    @Test func afterCloseNewAppendsAreRefusedBehindThoseInFlightWhichStillComplete() {
        var pipeline = Pipeline(after: 5)
        _ = start(2, on: &pipeline)
        #expect(pipeline.close("the journal is closed").isEmpty)
        // Refused, but released only after the appends still in flight: completions keep their order.
        for index in 2...3 {
            let (start, refused) = pipeline.start(index)
            guard case .queued = start, refused == nil else {
                Issue.record("append \(index) after close: \(start), released at once: \(refused != nil)")
                return
            }
        }
        #expect(pipeline.answer(.stored(at: 7), for: 7).released.isEmpty)
        let (released, failure) = pipeline.answer(.stored(at: 6), for: 6)
        #expect(failure == nil)
        #expect(released.map(\.completion) == [0, 1, 2, 3])
        #expect(released.map(\.sequence) == [nil, nil, nil, nil])
        // With nothing left in flight, a refusal is immediate.
        guard case (.refuse, let refused?) = pipeline.start(4) else {
            Issue.record("an append after close was not refused at once")
            return
        }
        #expect(refused.completion == 4 && refused.sequence == nil)
    }

    @Test func afterAFailureARefusalWaitsForTheAppendsStillInFlight() {
        var pipeline = Pipeline(after: 0)
        _ = start(3, on: &pipeline)
        let fenced = pipeline.answer(.failed("fenced"), for: 1)
        #expect(fenced.newFailure == "append 1 failed: fenced" && fenced.released.map(\.completion) == [0])
        guard case (.queued, nil) = pipeline.start(3) else {
            Issue.record("a refusal overtook appends 2 and 3, still in flight")
            return
        }
        #expect(pipeline.answer(.stored(at: 3), for: 3).released.isEmpty)
        let rest = pipeline.answer(.unknown("timed out"), for: 2)
        #expect(rest.released.map(\.completion) == [1, 2, 3] && rest.newFailure == nil)
        #expect(pipeline.inFlightCount == 0)
    }

    // MARK: Unknown outcomes

    @Test func anUnknownOutcomeIsPublishedAgainWithTheSameFencesAndLaterAppendsWaitBehindItInOrder() {
        let now = ContinuousClock.now
        var pipeline = Pipeline(after: 10)
        _ = start(3, on: &pipeline)
        let lost = pipeline.answer(.unknown("timeout"), for: 11, now: now)
        #expect(lost.released.isEmpty && lost.newFailure == nil && lost.publish.isEmpty)
        #expect(lost.retryAfter == nil, "no round while earlier answers are still due")
        #expect(lost.retryStarted == "append 11: timeout")
        #expect(pipeline.isRetrying)
        guard case .queued = pipeline.start(3).0 else {
            Issue.record("an append during a retry went out ahead of it")
            return
        }
        #expect(pipeline.retry(now: now).publish.isEmpty, "no round while 12 and 13 are unanswered")
        // 12 and 13 are refused: 11 never reached the stream, so this is not another writer.
        #expect(pipeline.answer(.failed("fenced"), for: 12, now: now).retryAfter == nil)
        let refused = pipeline.answer(.failed("fenced"), for: 13, now: now)
        #expect(refused.newFailure == nil && refused.released.isEmpty)
        #expect(refused.retryAfter != nil)
        let round = pipeline.retry(now: now + .milliseconds(50))
        #expect(round.publish.map(\.sequence) == [11, 12, 13, 14])
        #expect(round.publish.map(\.expected) == [10, 11, 12, 13])
        #expect(round.publish.map(\.followsOwnAppend) == [false, true, true, true])
        #expect(round.publish.map(\.completion) == [0, 1, 2, 3])
        var released: [Int] = []
        var settled: [Int] = []
        for sequence in [12, 11, 14, 13] as [UInt64] {
            let step = pipeline.answer(.stored(at: sequence), for: sequence, now: now + .milliseconds(80))
            #expect(step.newFailure == nil && step.retryStarted == nil)
            released += step.released.map(\.completion)
            if let (duration, rounds) = step.retrySettled {
                settled.append(rounds)
                #expect(duration == .milliseconds(80))
            }
        }
        #expect(released == [0, 1, 2, 3])
        #expect(settled == [1], "the end of the episode is told once, with its rounds")
        #expect(!pipeline.isRetrying && pipeline.inFlightCount == 0)
        guard case .publish(14, 15, true) = pipeline.start(4).0 else {
            Issue.record("after the retry, appends are not published at once")
            return
        }
    }

    @Test func aRetryAcknowledgedAsADuplicateCountsAsStoredAtTheFirstCopysSequence() {
        let now = ContinuousClock.now
        var pipeline = Pipeline(after: 0)
        _ = start(2, on: &pipeline)
        _ = pipeline.answer(.unknown("connection lost"), for: 1, now: now)
        // 2 was stored: so was 1, whose acknowledgement was lost.
        let later = pipeline.answer(.stored(at: 2), for: 2, now: now)
        #expect(later.released.isEmpty && later.retryAfter != nil)
        let round = pipeline.retry(now: now)
        #expect(round.publish.map(\.sequence) == [1], "what is known stored is not published again")
        let duplicate = pipeline.answer(.stored(at: 1), for: 1, now: now)
        #expect(duplicate.released.map(\.sequence) == [1, 2])
        #expect(duplicate.newFailure == nil && !pipeline.isRetrying)
    }

    @Test func aRefusalOfARetryPublishedAfterEveryEarlierAppendWasStoredFailsItAndEveryLaterOneOnce() {
        let now = ContinuousClock.now
        var pipeline = Pipeline(after: 10)
        _ = start(2, on: &pipeline)
        _ = pipeline.answer(.stored(at: 11), for: 11, now: now)
        _ = pipeline.answer(.unknown("no responders"), for: 12, now: now)
        _ = pipeline.start(2)
        var round = pipeline.retry(now: now)
        #expect(round.publish.map(\.sequence) == [12, 13])
        _ = pipeline.answer(.unknown("no responders"), for: 12, now: now)
        let second = pipeline.answer(.failed("fenced"), for: 13, now: now)
        #expect(second.newFailure == nil, "13 was refused behind an unknown 12: not a verdict")
        #expect(second.retryAfter.map { $0 > .milliseconds(50) } == true, "the backoff grows")
        round = pipeline.retry(now: now)
        #expect(round.publish.map(\.sequence) == [12, 13])
        let refused = pipeline.answer(.failed("fenced"), for: 12, now: now)
        #expect(refused.newFailure == "append 12 failed: fenced")
        #expect(refused.released.map(\.completion) == [1])
        #expect(refused.released.allSatisfy { $0.sequence == nil })
        let last = pipeline.answer(.stored(at: 13), for: 13, now: now)
        #expect(last.newFailure == nil && last.released.map(\.completion) == [2] && last.released[0].sequence == nil)
        #expect(pipeline.retry(now: now).publish.isEmpty)
        guard case .refuse = pipeline.start(3).0 else {
            Issue.record("an append after a refusal was published")
            return
        }
    }

    @Test func anAppendStillUnknownWhenTheBoundRunsOutFailsWithEveryOneWaitingBehindIt() {
        let now = ContinuousClock.now
        var pipeline = Pipeline(after: 0, retryBound: .seconds(10))
        _ = start(1, on: &pipeline)
        let lost = pipeline.answer(.unknown("timeout"), for: 1, now: now)
        #expect(lost.retryAfter != nil)
        _ = pipeline.start(1)
        _ = pipeline.start(2)
        let round = pipeline.retry(now: now + .seconds(5))
        #expect(round.publish.map(\.sequence) == [1, 2, 3])
        for sequence in [1, 2, 3] as [UInt64] {
            _ = pipeline.answer(.unknown("timeout"), for: sequence, now: now + .seconds(7))
        }
        let expired = pipeline.retry(now: now + .seconds(10))
        #expect(expired.publish.isEmpty)
        #expect(expired.newFailure?.hasPrefix("append 1 had no definite answer within") == true)
        #expect(expired.released.map(\.completion) == [0, 1, 2])
        #expect(expired.released.allSatisfy { $0.sequence == nil })
    }

    @Test func closingDuringARetryFailsTheAppendsWaitingAndReportsNothing() {
        let now = ContinuousClock.now
        var pipeline = Pipeline(after: 0)
        _ = start(1, on: &pipeline)
        _ = pipeline.answer(.unknown("timeout"), for: 1, now: now)
        _ = pipeline.start(1)
        let released = pipeline.close("the journal is closed")
        #expect(released.map(\.completion) == [0, 1] && released.allSatisfy { $0.sequence == nil })
        #expect(pipeline.retry(now: now).publish.isEmpty)
    }
}
