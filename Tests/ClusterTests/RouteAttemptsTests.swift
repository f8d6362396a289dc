// The requester's rules for a request routed to a partition's owner: only what certainly was
// not carried out is sent again, with growing pauses, until the failover bound.
import Cluster
import Testing

@Suite struct RouteAttemptsTests {
    let policy = RoutePolicy(boundMilliseconds: 2_000, firstPauseMilliseconds: 50, longestPauseMilliseconds: 400)

    @Test func anAnswerEndsTheRequest() {
        var attempts = RouteAttempts(policy: policy, startedAt: 1_000)
        let step = attempts.next(after: .answered([7]), at: 1_003)
        #expect(step == .done([7]) && attempts.attempts == 1)
    }

    @Test func anUnknownOutcomeIsNeverSentAgain() {
        var attempts = RouteAttempts(policy: policy, startedAt: 0)
        let first = attempts.next(after: .notDelivered, at: 10)
        let second = attempts.next(after: .unknown, at: 100)
        #expect(first == .retry(afterMilliseconds: 50))
        #expect(second == .outcomeUnknown)
    }

    @Test func undeliveredRequestsWaitLongerEachTimeUpToTheLongestPause() {
        var attempts = RouteAttempts(policy: policy, startedAt: 0)
        let steps = (0..<6).map { attempts.next(after: .notDelivered, at: Int64($0) * 10) }
        #expect(steps == [50, 100, 200, 400, 400, 400].map { .retry(afterMilliseconds: $0) })
    }

    @Test func theLastPauseEndsAtTheBoundAndThenNoOwnerIsReported() {
        var attempts = RouteAttempts(policy: policy, startedAt: 500)
        let nearTheEnd = attempts.next(after: .notDelivered, at: 2_480)
        let atTheEnd = attempts.next(after: .notDelivered, at: 2_500)
        #expect(nearTheEnd == .retry(afterMilliseconds: 20))
        #expect(atTheEnd == .noOwner(attempts: 2))
    }
}
