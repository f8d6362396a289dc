// Runners online over every node: the union of the reports heard in the last five seconds, each
// node's newest report replacing its last, a runner on two nodes counted once, a silent node
// dropped; a report read whole or refused.
import BangbangCore
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct RunnersOnlineTests {
    static let (ann, bo, cy) = (UserID(7), UserID(42), UserID(99))

    @Test func theUnionOfTheRecentReportsCountsARunnerOnce() {
        var online = RunnersOnline()
        online.heard(WatchingReport(node: "bb1", watching: [.bounty: [Self.ann, Self.bo], .express: [Self.ann]]), at: 1_000)
        online.heard(WatchingReport(node: "bb2", watching: [.bounty: [Self.bo, Self.cy]]), at: 1_500)
        #expect(online.online(at: 2_000) == [.bounty: [Self.ann, Self.bo, Self.cy], .express: [Self.ann]])
        // bb1's newer report: ann stopped watching express.
        online.heard(WatchingReport(node: "bb1", watching: [.bounty: [Self.ann]]), at: 3_000)
        #expect(online.online(at: 3_000) == [.bounty: [Self.ann, Self.bo, Self.cy]])
        // bb2 falls silent: five seconds after its last report it no longer counts.
        #expect(online.online(at: 6_500)[.bounty] == [Self.ann, Self.bo, Self.cy])
        #expect(online.online(at: 6_501)[.bounty] == [Self.ann])
        #expect(online.online(at: 8_001).isEmpty)
    }

    @Test func theSessionsOfTheRecentReportsAreSummed() {
        var online = RunnersOnline()
        online.heard(WatchingReport(node: "bb1", watching: [:], connections: 4, users: 3), at: 1_000)
        online.heard(WatchingReport(node: "bb2", watching: [:], connections: 2, users: 2), at: 1_500)
        #expect(online.sessions(at: 2_000) == (6, 5))
        online.heard(WatchingReport(node: "bb1", watching: [:], connections: 1, users: 1), at: 3_000)
        #expect(online.sessions(at: 3_000) == (3, 3), "a node's newer report replaces its last")
        #expect(online.sessions(at: 6_501) == (1, 1), "a node silent for five seconds counts no more")
    }

    @Test func aReportIsReadBackAsWrittenOrRefusedWhole() throws {
        let report = WatchingReport(node: "bb-2", watching: [.bounty: [Self.bo, Self.ann], .group: []], connections: 3, users: 2)
        let bytes = report.encoded()
        #expect(String(decoding: bytes, as: UTF8.self)
                == #"{"connections":3,"node":"bb-2","users":2,"watching":{"bounty":[7,42],"group":[]}}"#)
        #expect(WatchingReport.decode(bytes) == report)
        // From a version before the counts: counts none.
        #expect(WatchingReport.decode(Array(#"{"node":"bb2","watching":{"bounty":[7]}}"#.utf8))
                == WatchingReport(node: "bb2", watching: [.bounty: [Self.ann]]))
        for text in [#"{"node":"bb2"}"#, #"{"node":"","watching":{}}"#, #"{"node":"bb2","watching":{"taxi":[1]}}"#,
                     #"{"node":"bb2","watching":{"bounty":[0]}}"#, #"{"node":"bb2","watching":{"bounty":["7"]}}"#,
                     #"{"node":"bb2","watching":{},"extra":1}"#, #"{"node":"bb2","watching":[]}"#, "not json",
                     #"{"node":""# + String(repeating: "n", count: 65) + #"","watching":{}}"#,
                     #"{"connections":1,"node":"bb2","watching":{}}"#, #"{"node":"bb2","users":1,"watching":{}}"#,
                     #"{"connections":-1,"node":"bb2","users":1,"watching":{}}"#,
                     #"{"connections":1,"node":"bb2","users":"1","watching":{}}"#,
                     #"{"connections":1,"extra":0,"node":"bb2","users":1,"watching":{}}"#] {
            #expect(WatchingReport.decode(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
