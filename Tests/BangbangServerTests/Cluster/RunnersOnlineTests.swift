// Runners online over every node: the union of the reports heard in the last five seconds, each
// node's newest report replacing its last, a runner on two nodes counted once, a silent node
// dropped; a report read whole or refused.
import BangbangCore
import Testing
@testable import BangbangServer

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

    @Test func aReportIsReadBackAsWrittenOrRefusedWhole() throws {
        let report = WatchingReport(node: "bb-2", watching: [.bounty: [Self.bo, Self.ann], .group: []])
        let bytes = report.encoded()
        #expect(String(decoding: bytes, as: UTF8.self) == #"{"node":"bb-2","watching":{"bounty":[7,42],"group":[]}}"#)
        #expect(WatchingReport.decode(bytes) == report)
        for text in [#"{"node":"bb2"}"#, #"{"node":"","watching":{}}"#, #"{"node":"bb2","watching":{"taxi":[1]}}"#,
                     #"{"node":"bb2","watching":{"bounty":[0]}}"#, #"{"node":"bb2","watching":{"bounty":["7"]}}"#,
                     #"{"node":"bb2","watching":{},"extra":1}"#, #"{"node":"bb2","watching":[]}"#, "not json",
                     #"{"node":""# + String(repeating: "n", count: 65) + #"","watching":{}}"#] {
            #expect(WatchingReport.decode(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
