// Administration's lists and counts made of every account partition's: verifications waiting,
// oldest first across partitions; feedback, newest first by time and cluster id, cut to the page
// with the cursor of the next; the counts summed but what every owner counts alike for the whole
// cluster. Feedback's cluster ids, and paging through a cluster's feedback on the owners.
import BangbangProtocol
import JSON
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct PairAdministrationTests {
    @Test func theListsAreMergedInTheirOrderAndTheCountsSummed() {
        func user(_ id: Int64, submitted: Int64) -> JSONValue { ["id": .integer(id), "verification": ["submitted_at": .integer(submitted)]] }
        let pending = PairAdministration.merge("admin.pending_verifications", [
            ["users": [user(4, submitted: 30), user(7, submitted: 10)]], ["users": [user(5, submitted: 20)]], ["users": []],
        ])
        #expect(pending == ["users": [user(7, submitted: 10), user(5, submitted: 20), user(4, submitted: 30)]])

        func entry(_ id: Int64, at time: Int64) -> JSONValue { ["id": .integer(id), "submitted_at": .integer(time), "user_id": 1] }
        // Each partition's limit + 1 newest: the page is the newest 3 of all, ties by id, and
        // more remain after it.
        let parts: [[String: JSONValue]] = [
            ["feedback": [entry(5, at: 50), entry(9, at: 10)]], ["feedback": [entry(6, at: 60), entry(8, at: 50), entry(4, at: 20)]],
        ]
        #expect(PairAdministration.mergeFeedback(parts, limit: 3)
                == ["feedback": [entry(6, at: 60), entry(8, at: 50), entry(5, at: 50)], "next_before": 5])
        #expect(PairAdministration.mergeFeedback(parts, limit: 5)
                == ["feedback": [entry(6, at: 60), entry(8, at: 50), entry(5, at: 50), entry(4, at: 20), entry(9, at: 10)]],
                "the last page names no next")

        let counts = PairAdministration.merge("admin.stats", [
            ["connections": 4, "pending_verifications": 1, "users_online": 3, "types": ["bounty": ["open": 2, "runners_online": 3]]],
            ["connections": 5, "pending_verifications": 2, "users_online": 3, "types": ["bounty": ["open": 5, "runners_online": 1]]],
        ])
        #expect(counts == ["connections": 5, "pending_verifications": 3, "users_online": 3,
                           "types": ["bounty": ["open": 7, "runners_online": 3]]],
                "what every owner counts from every node's report is the highest, not a sum")
    }

    @Test func aClusterIDNamesItsPartitionAndNumber() {
        #expect(FeedbackQuery.clusterID(number: 7, partition: 2, partitions: 4) == 30)
        #expect(FeedbackQuery.entry(named: 30, partitions: 4)! == (2, 7))
        #expect(FeedbackQuery.entry(named: 3, partitions: 4) == nil, "below every id: number 0")
        #expect(FeedbackQuery.clusterID(number: 7, partition: 0, partitions: 1) == 7, "one partition: its own numbers")
        for id in UInt64(4)...200 {
            let named = FeedbackQuery.entry(named: id, partitions: 4)!
            #expect(FeedbackQuery.clusterID(number: named.number, partition: named.partition, partitions: 4) == id)
        }
    }
}
