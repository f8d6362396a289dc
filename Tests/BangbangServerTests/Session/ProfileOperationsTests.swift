// profile.*, runner verification and feedback through a session.
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct ProfileOperationsTests {
    @Test func anUpdatedNicknameIsWhatTheProfileShows() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900005001").isSuccess)
        let update = try #require(await harness.call("profile.update", #"{"nickname":"Night owl"}"#))
        #expect(update.isSuccess, "\(update)")
        let profile = try #require(await harness.call("profile.get"))
        #expect(profile.isSuccess, "\(profile)")
        #expect(Self.contains(profile, "nickname", .string("Night owl")), "\(profile)")
    }

    @Test func anUnknownProfileFieldIsRefusedAndChangesNothing() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900005002").isSuccess)
        let before = try #require(await harness.call("profile.get"))
        let reply = try #require(await harness.call("profile.update", #"{"nick":"typo"}"#))
        #expect(reply.errorCode == "invalid_field")
        #expect(reply["error"]?["field"] == .string("nick"))
        #expect(await harness.call("profile.get")?["data"] == before["data"])
    }

    @Test func aVerificationNeedsItsFields() async throws {
        let harness = try SessionHarness()
        #expect(try await harness.logIn("+8613900005003").isSuccess)
        let reply = try #require(await harness.call("runner.submit_verification", #"{"real_name":"Li Lei"}"#))
        #expect(reply.errorCode == "invalid_field", "\(reply)")
    }

    /// Whether `key` holds `value` anywhere in `json`.
    static func contains(_ json: JSONValue, _ key: String, _ value: JSONValue) -> Bool {
        switch json {
        case .object(let members): members[key] == value || members.values.contains { contains($0, key, value) }
        case .array(let items): items.contains { contains($0, key, value) }
        default: false
        }
    }
}
