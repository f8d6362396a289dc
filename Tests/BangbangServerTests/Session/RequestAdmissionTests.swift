// Admission on its own, with explicit times: the order of its checks (protocol/README.md, "Error
// precedence"), the request rates and the close for flooding, the requests in flight, and who may
// run what. Both session kinds drive this one state machine, so what holds here holds for both.
import BangbangCore
import Testing
import WebSocketServer
@testable import BangbangApplication

@Suite struct RequestAdmissionTests {
    /// The error code and counter label of a refusal; nil for anything else.
    func refusal(_ decision: RequestAdmission.Decision) -> (code: ErrorCode, label: String, limit: String?)? {
        guard case .refuse(let error, let label, let limit, _) = decision else { return nil }
        return (error.code, label, limit)
    }

    func runs(_ decision: RequestAdmission.Decision) -> String? {
        guard case .run(let operation) = decision else { return nil }
        return operation.name
    }

    let user = RequestAdmission.Login.user(UserID(7))

    @Test func anAdmittedRequestRunsAndCountsInFlightUntilFinished() {
        var admission = RequestAdmission(requestsPerSecond: 0, now: 0)
        #expect(runs(admission.admit("order.publish", login: user, users: nil, now: 0)) == "order.publish")
        #expect(admission.requestsInFlight == 1)
        admission.finish()
        #expect(admission.requestsInFlight == 0)
        admission.finish()
        #expect(admission.requestsInFlight == 0, "a finish without a request never goes below zero")
    }

    @Test func anUnknownNameIsAnsweredAsSuchAndTakesAToken() {
        var admission = RequestAdmission(requestsPerSecond: 1, now: 0)
        let unknown = refusal(admission.admit("order.teleport", login: user, users: nil, now: 0))
        #expect(unknown?.code == .unknownOperation && unknown?.label == "unknown:unknown_operation" && unknown?.limit == nil)
        // The burst is 2: the unknown name took one, so one more request is admitted, then refused.
        #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 0)) == "info.get")
        #expect(refusal(admission.admit("info.get", login: .none, users: nil, now: 0))?.code == .rateLimited)
        // Over the rate, an unknown name is still told it is unknown, not that it waits.
        #expect(refusal(admission.admit("order.teleport", login: user, users: nil, now: 0))?.code == .unknownOperation)
    }

    @Test func theConnectionRateRefusesWithTheWaitAndFlagsTheFirstRefusal() throws {
        var admission = RequestAdmission(requestsPerSecond: 10, now: 1_000)
        for _ in 0..<20 { #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 1_000)) != nil) }
        let first = admission.admit("info.get", login: .none, users: nil, now: 1_000)
        guard case .refuse(let error, let label, let limit, let isFirst) = first else {
            Issue.record("the 21st request in a burst of 20 was \(first)")
            return
        }
        #expect(error.code == .rateLimited && label == "info.get:rate_limited" && limit == "connection" && isFirst)
        #expect(error.retryAfterMilliseconds == 100, "one token at 10/s is 100 ms away")
        guard case .refuse(_, _, _, let isFirstAgain) = admission.admit("info.get", login: .none, users: nil, now: 1_000) else {
            Issue.record("a second refusal was not a refusal")
            return
        }
        #expect(!isFirstAgain)
        #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 1_100)) != nil, "a token came back after 100 ms")
    }

    @Test func aConnectionRefusedABurstsWorthInARowIsClosedThenIgnored() {
        var admission = RequestAdmission(requestsPerSecond: 1, now: 0)
        _ = admission.admit("info.get", login: .none, users: nil, now: 0)
        _ = admission.admit("info.get", login: .none, users: nil, now: 0)
        // Two refusals (the burst's size) are answered; the third in a row closes.
        for _ in 0..<2 { #expect(refusal(admission.admit("info.get", login: .none, users: nil, now: 0))?.code == .rateLimited) }
        guard case .closeForFlooding(let limit, let refusals) = admission.admit("info.get", login: .none, users: nil, now: 0) else {
            Issue.record("the third refusal in a row did not close the connection")
            return
        }
        #expect(limit == "connection" && refusals == 3)
        guard case .ignore = admission.admit("info.get", login: .none, users: nil, now: 60_000) else {
            Issue.record("a closing connection's request was answered")
            return
        }
    }

    @Test func anAdmittedRequestEndsARunOfRefusals() {
        var admission = RequestAdmission(requestsPerSecond: 1, now: 0)
        _ = admission.admit("info.get", login: .none, users: nil, now: 0)
        _ = admission.admit("info.get", login: .none, users: nil, now: 0)
        #expect(refusal(admission.admit("info.get", login: .none, users: nil, now: 0)) != nil)
        #expect(refusal(admission.admit("info.get", login: .none, users: nil, now: 0)) != nil)
        #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 1_000)) != nil)
        // The count started again: two more refusals are answered, and only a third closes.
        for _ in 0..<2 { #expect(refusal(admission.admit("info.get", login: .none, users: nil, now: 1_000)) != nil) }
        guard case .closeForFlooding = admission.admit("info.get", login: .none, users: nil, now: 1_000) else {
            Issue.record("a third refusal in a row did not close")
            return
        }
    }

    @Test func theUserRateIsSharedByEveryConnectionOfTheUser() {
        let users = KeyedRateLimiter<UserID>(ratePerSecond: 1, capacity: 2)
        var first = RequestAdmission(requestsPerSecond: 0, now: 0)
        var second = RequestAdmission(requestsPerSecond: 0, now: 0)
        #expect(runs(first.admit("order.publish", login: user, users: users, now: 0)) != nil)
        #expect(runs(second.admit("order.publish", login: user, users: users, now: 0)) != nil)
        let refused = refusal(first.admit("order.publish", login: user, users: users, now: 0))
        #expect(refused?.code == .rateLimited && refused?.limit == "user")
        #expect(runs(second.admit("order.publish", login: .user(UserID(8)), users: users, now: 0)) != nil, "another user has a bucket of their own")
        #expect(runs(first.admit("info.get", login: .none, users: users, now: 0)) != nil, "a connection not logged in has no user bucket")
    }

    @Test func requestsInFlightAreBoundedAndAFinishFreesASlot() {
        var admission = RequestAdmission(requestsPerSecond: 0, now: 0)
        for _ in 0..<RequestAdmission.maxRequestsInFlight { #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 0)) != nil) }
        guard case .refuse(let error, let label, let limit, _) = admission.admit("info.get", login: .none, users: nil, now: 0) else {
            Issue.record("a request beyond the in-flight bound ran")
            return
        }
        #expect(error.code == .rateLimited && error.retryAfterMilliseconds == 0 && label == "info.get:rate_limited" && limit == nil)
        admission.finish()
        #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 0)) != nil)
    }

    @Test func anOperationThatNeedsALoginIsRefusedByWhoAsks() {
        var admission = RequestAdmission(requestsPerSecond: 0, now: 0)
        #expect(refusal(admission.admit("order.publish", login: .none, users: nil, now: 0))?.code == .unauthenticated)
        #expect(refusal(admission.admit("order.publish", login: .none, users: nil, now: 0))?.label == "order.publish:unauthenticated")
        #expect(refusal(admission.admit("order.publish", login: .builtInAdministrator, users: nil, now: 0))?.code == .forbidden)
        #expect(runs(admission.admit("admin.stats", login: .builtInAdministrator, users: nil, now: 0)) == "admin.stats")
        #expect(runs(admission.admit("info.get", login: .builtInAdministrator, users: nil, now: 0)) == "info.get",
                "what needs no login needs no user either")
        #expect(refusal(admission.admit("admin.stats", login: .none, users: nil, now: 0))?.code == .unauthenticated)
        #expect(admission.requestsInFlight == 2, "refusals are never in flight")
    }

    @Test func theUnknownNameComesBeforeTheRateWhichComesBeforeTheInFlightBoundWhichComesBeforeTheLogin() {
        var admission = RequestAdmission(requestsPerSecond: 40, now: 0)
        for _ in 0..<RequestAdmission.maxRequestsInFlight {
            _ = admission.admit("info.get", login: .none, users: nil, now: 0)
            admission.finish()
        }
        // 80 tokens: 64 used; fill the in-flight bound with the remaining 16 plus refill.
        for _ in 0..<16 { #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 0)) != nil) }
        #expect(refusal(admission.admit("nope", login: .none, users: nil, now: 0))?.code == .unknownOperation)
        #expect(refusal(admission.admit("order.publish", login: .none, users: nil, now: 0))?.limit == "connection",
                "over the rate: rate_limited by the connection before unauthenticated")
        for _ in 0..<48 { #expect(runs(admission.admit("info.get", login: .none, users: nil, now: 10_000)) != nil) }
        let full = refusal(admission.admit("order.publish", login: .none, users: nil, now: 10_000))
        #expect(full?.code == .rateLimited && full?.limit == nil, "the in-flight bound before unauthenticated")
    }

    @Test func administrationIsEveryAdminOperationAndNothingElse() {
        let administration = Set(OperationTable.shared.operations.values.filter(\.isAdministration).map(\.name))
        #expect(administration == Set(AdminOperations.all.map(\.name)))
        #expect(!administration.isEmpty)
    }
}
