// admin.*: only administrators; a configured admin phone is one from its first login.
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct AdminOperationsTests {
    @Test func aUserWhoIsNotAnAdministratorIsForbidden() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900006001").isSuccess)
        for op in ["admin.pending_verifications", "admin.list_feedback", "admin.stats"] {
            #expect(await harness.call(op)?.errorCode == "forbidden", "\(op)")
        }
    }

    @Test func theConfiguredAdministratorSeesTheQueues() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn(ApplicationHarness.adminPhone).isSuccess)
        let pending = try #require(await harness.call("admin.pending_verifications"))
        #expect(pending.isSuccess, "\(pending)")
        #expect(pending["data"]?["users"] == .array([]))
        #expect(await harness.call("admin.pending_verifications", #"{"all":true}"#)?.errorCode == "invalid_field")
    }

    @Test func anAdministratorSeesASubmittedVerification() async throws {
        let runner = try SessionHarness()
        #expect(try await runner.logIn("+8613900006002").isSuccess)
        let submitted = try #require(await runner.call("runner.submit_verification",
            #"{"real_name":"Li Lei","student_id":"2023123456","school":"North Campus University"}"#))
        guard submitted.isSuccess else {
            Issue.record("the verification was refused: \(submitted)")
            return
        }
        // A second session on the same application, logged in as the administrator.
        let admin = try SessionHarness(sharing: runner.application)
        #expect(try await admin.logIn(ApplicationHarness.adminPhone).isSuccess)
        let pending = try #require(await admin.call("admin.pending_verifications"))
        #expect(pending["data"]?["users"]?.arrayCount == 1, "\(pending)")
    }
}
