// Administration's lists and counts made of every account partition's: verifications waiting,
// oldest first across partitions; feedback, newest first, cut to the page; the counts summed but
// the runners online, which every owner counts alike for the whole cluster.
import BangbangProtocol
import JSON
import Testing
@testable import BangbangServer

@Suite struct PairAdministrationTests {
    @Test func theListsAreMergedInTheirOrderAndTheCountsSummed() {
        func user(_ id: Int64, submitted: Int64) -> JSONValue { ["id": .integer(id), "verification": ["submitted_at": .integer(submitted)]] }
        let pending = PairAdministration.merge("admin.pending_verifications", [
            ["users": [user(4, submitted: 30), user(7, submitted: 10)]], ["users": [user(5, submitted: 20)]], ["users": []],
        ], limit: 20)
        #expect(pending == ["users": [user(7, submitted: 10), user(5, submitted: 20), user(4, submitted: 30)]])

        func entry(_ text: String, at time: Int64) -> JSONValue { ["text": .string(text), "submitted_at": .integer(time), "user_id": 1] }
        let feedback = PairAdministration.merge("admin.list_feedback", [
            ["feedback": [entry("b", at: 50), entry("d", at: 10)]], ["feedback": [entry("a", at: 60), entry("c", at: 20)]],
        ], limit: 3)
        #expect(feedback == ["feedback": [entry("a", at: 60), entry("b", at: 50), entry("c", at: 20)]])

        let counts = PairAdministration.merge("admin.stats", [
            ["connections": 4, "pending_verifications": 1, "users_online": 3, "types": ["bounty": ["open": 2, "runners_online": 3]]],
            ["connections": 5, "pending_verifications": 2, "users_online": 3, "types": ["bounty": ["open": 5, "runners_online": 1]]],
        ], limit: 20)
        #expect(counts == ["connections": 5, "pending_verifications": 3, "users_online": 3,
                           "types": ["bounty": ["open": 7, "runners_online": 3]]],
                "what every owner counts from every node's report is the highest, not a sum")
    }
}
