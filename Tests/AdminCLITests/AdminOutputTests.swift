import BangbangProtocol
import Testing
@testable import bangbang

@Suite struct AdminOutputTests {
    @Test func listsBecomeTablesAndObjectsKeyValueLines() {
        let reply: JSONValue = ["users": [
            ["id": 1, "profile": ["nickname": "Ann"], "is_verified_runner": false],
            ["id": 22, "profile": ["nickname": "Bo"], "phone": "+8613800138000"],
        ]]
        let table = AdminOutput.render(reply).split(separator: "\n").map(String.init)
        #expect(table[0] == "users (2):")
        #expect(table[1].hasPrefix("ID") && table[1].contains("PROFILE.NICKNAME") && table[1].contains("PHONE"))
        #expect(table[2].contains("Ann") && table[2].contains("no"))
        #expect(table[3].contains("22") && table[3].contains("+8613800138000"))

        let single = AdminOutput.render(["user": ["id": 5, "verification": ["status": "approved"]], "empty": [],
                                         "counts": [:]])
        #expect(single.contains("user.verification.status  approved") && single.contains("empty: none"))
        #expect(single.contains("counts: none"))
    }
}
