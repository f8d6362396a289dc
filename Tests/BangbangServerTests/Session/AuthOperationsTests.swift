// auth.*: codes, logging in and out, as a session sees them.
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct AuthOperationsTests {
    @Test func aRevealedCodeLogsTheSessionIn() async throws {
        let harness = try SessionHarness()
        let reply = try await harness.logIn("+8613900001001")
        #expect(reply.isSuccess, "\(reply)")
        #expect(harness.session.user != nil)
        #expect(await harness.call("orders.mine")?.isSuccess == true, "a login-only operation now runs")
    }

    @Test func aWrongCodeIsRefusedNamingTheField() async throws {
        let harness = try SessionHarness()
        let issued = try #require(await harness.call("auth.request_code", #"{"phone":"+8613900001002"}"#))
        #expect(issued.isSuccess)
        guard case .string(let code)? = issued["data"]?["dev_code"] else {
            Issue.record("no code revealed")
            return
        }
        let wrong = code == "000000" ? "111111" : "000000"
        let reply = try #require(await harness.call("auth.login_code",
                                                    #"{"phone":"+8613900001002","code":"\#(wrong)","device":"test"}"#))
        #expect(reply.errorCode == "code_incorrect")
        #expect(reply["error"]?["field"] == .string("code"))
        #expect(harness.session.user == nil)
    }

    @Test func aCodeRequestNeedsAPhone() async throws {
        let harness = try SessionHarness()
        let reply = try #require(await harness.call("auth.request_code"))
        #expect(reply.errorCode == "invalid_field")
        #expect(reply["error"]?["field"] == .string("phone"))
    }

    @Test func loggingOutEndsTheLogin() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900001003").isSuccess)
        #expect(await harness.call("auth.logout")?.isSuccess == true)
        #expect(await harness.call("orders.mine")?.errorCode == "unauthenticated")
    }

    /// A revocation from another device is durable before this connection's logout reaches its
    /// loop; a request in between must already find the session gone.
    @Test func aSessionRevokedInTheStoreNoLongerListsSessionsBeforeItsConnectionHears() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900001004").isSuccess)
        #expect(await harness.call("auth.sessions")?.isSuccess == true)
        let user = try #require(harness.session.user)
        let session = try #require(harness.session.sessionID)
        let app = try #require(harness.application.app)
        let revoked: Bool = await withCheckedContinuation { done in
            app.accounts.perform { owner in
                let now = app.clock()
                guard let event = try? owner.store.decideRevokeSession(user: user, session: session, now: now) else {
                    return done.resume(returning: false)
                }
                owner.commit(event, at: now, onDurable: { result in done.resume(returning: (try? result.get()) != nil) })
            }
        }
        #expect(revoked)
        #expect(harness.session.sessionID == session, "the connection itself was not told")
        let reply = await harness.call("auth.sessions")
        #expect(reply?.errorCode == "unauthenticated", "\(String(describing: reply))")
    }
}
