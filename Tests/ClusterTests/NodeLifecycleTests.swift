// A node's lifecycle without NATS or a process: every way it can give up a partition, and what
// it asks of the executable (an exit status) or of the runner (recover, stop) for each.
import Testing
@testable import Cluster

@Suite struct NodeLifecycleTests {
    func serving(_ pairs: [Int], partitioned: Bool) -> NodeLifecycle {
        var lifecycle = NodeLifecycle(isPartitioned: partitioned)
        #expect(lifecycle.handle(.joined).isEmpty)
        for pair in pairs {
            #expect(lifecycle.handle(.acquired(pair: pair, term: UInt64(10 + pair))) == [.recover(pair: pair, term: UInt64(10 + pair))])
            #expect(lifecycle.handle(.recovered(pair: pair)).isEmpty)
        }
        return lifecycle
    }

    func exitStatus(_ actions: [NodeLifecycle.Action]) -> Int32? {
        for case .exit(let status, _, _) in actions { return status }
        return nil
    }

    @Test func aLeaseAcquiredIsRecoveredThenServed() {
        var lifecycle = NodeLifecycle(isPartitioned: false)
        #expect(lifecycle.handle(.acquired(pair: 0, term: 3)).isEmpty, "nothing is taken before the node has joined")
        _ = lifecycle.handle(.joined)
        #expect(lifecycle.handle(.acquired(pair: 0, term: 3)) == [.recover(pair: 0, term: 3)])
        #expect(lifecycle.pairs[0] == .recovering(term: 3))
        _ = lifecycle.handle(.recovered(pair: 0))
        #expect(lifecycle.pairs[0] == .serving(term: 3))
    }

    @Test func aLeaseTakenOverOrExpiredEndsTheProcessWith75() {
        for reason in ["takenOver", "expired"] {
            var lifecycle = serving([0], partitioned: false)
            let actions = lifecycle.handle(.lost(pair: 0, reason: reason, handedBack: false))
            #expect(exitStatus(actions) == 75, "\(reason)")
            #expect(actions.first?.isFailure == true)
            #expect(lifecycle.phase == .exited(status: 75))
            #expect(lifecycle.handle(.acquired(pair: 0, term: 99)).isEmpty, "an exiting node takes nothing more")
        }
    }

    @Test func severalPairsAlsoEndOnALossThatIsNotAHandBack() {
        var lifecycle = serving([0, 2], partitioned: true)
        #expect(exitStatus(lifecycle.handle(.lost(pair: 2, reason: "takenOver", handedBack: false))) == 75)
    }

    @Test func aFencedAppendEndsTheProcessWith75() {
        var lifecycle = serving([1], partitioned: true)
        guard case .exit(let status, let event, let detail)? = lifecycle.handle(.fenced(pair: 1, detail: "wrong last sequence")).first else {
            Issue.record("a fenced append did not end the node")
            return
        }
        #expect(status == 75 && event == "journal_fenced" && detail.contains("pair 1") && detail.contains("wrong last sequence"))
    }

    @Test func aHandBackStopsThePairFirstAndWithOnePairThenEndsTheProcess() {
        var lifecycle = serving([0], partitioned: false)
        #expect(lifecycle.handle(.handBackDue(pair: 0)) == [.stopForHandBack(pair: 0)])
        #expect(lifecycle.handle(.handBackDue(pair: 0)).isEmpty, "one stop per hand-back")
        #expect(lifecycle.handle(.stoppedForHandBack(pair: 0)).isEmpty)
        let actions = lifecycle.handle(.lost(pair: 0, reason: "handedBack", handedBack: true))
        guard let exit = actions.first, case .exit(75, "partition_handed_back", _) = exit else {
            Issue.record("one pair handed back: \(actions)")
            return
        }
        #expect(!exit.isFailure, "a hand-back is a planned exit")
    }

    @Test func withSeveralPairsAHandBackLeavesTheNodeServingTheOthers() {
        var lifecycle = serving([0, 1, 2], partitioned: true)
        #expect(lifecycle.handle(.handBackDue(pair: 1)) == [.stopForHandBack(pair: 1)])
        #expect(lifecycle.handle(.lost(pair: 1, reason: "handedBack", handedBack: true)).isEmpty)
        #expect(lifecycle.pairs == [0: .serving(term: 10), 2: .serving(term: 12)])
        #expect(lifecycle.phase == .running)
        #expect(lifecycle.handle(.acquired(pair: 1, term: 40)) == [.recover(pair: 1, term: 40)], "it may take the pair again later")
    }

    @Test func aHandBackReportedWithoutTheStopIsALoss() {
        // The manager deletes a key only after the holder stopped; a hand-back loss for a pair the
        // node never stopped is not one it agreed to.
        var lifecycle = serving([0, 1], partitioned: true)
        #expect(exitStatus(lifecycle.handle(.lost(pair: 1, reason: "handedBack", handedBack: true))) == 75)
    }

    @Test func aHandBackDueWhileRecoveringStopsItOnceServed() {
        var lifecycle = NodeLifecycle(isPartitioned: true)
        _ = lifecycle.handle(.joined)
        _ = lifecycle.handle(.acquired(pair: 3, term: 5))
        #expect(lifecycle.handle(.handBackDue(pair: 3)) == [.stopForHandBack(pair: 3)])
        #expect(lifecycle.handle(.recovered(pair: 3)).isEmpty)
        #expect(lifecycle.pairs[3] == .handingBack(term: 5), "recovered while handing back: still handing back")
    }

    @Test func aFailedRecoveryOrJoinEndsTheProcessWith75() {
        var recovering = NodeLifecycle(isPartitioned: false)
        _ = recovering.handle(.joined)
        _ = recovering.handle(.acquired(pair: 0, term: 1))
        #expect(exitStatus(recovering.handle(.recoveryFailed(pair: 0, detail: "no stream leader"))) == 75)
        var joining = NodeLifecycle(isPartitioned: false)
        guard case .exit(75, "cluster_partitions_mismatch", "made with 4 pairs")? =
                joining.handle(.failed(event: "cluster_partitions_mismatch", detail: "made with 4 pairs")).first else {
            Issue.record("a failed join did not end the node")
            return
        }
    }

    @Test func aCleanStopStopsEverythingOnceAndNothingAfterItIsALoss() {
        var lifecycle = serving([0], partitioned: false)
        #expect(lifecycle.handle(.stopRequested) == [.stopEverything])
        #expect(lifecycle.handle(.stopRequested).isEmpty)
        #expect(lifecycle.isLeaving)
        #expect(lifecycle.handle(.lost(pair: 0, reason: "handedBack", handedBack: true)).isEmpty, "the stop hands the lease back")
        #expect(lifecycle.handle(.fenced(pair: 0, detail: "late")).isEmpty)
        #expect(lifecycle.handle(.handBackDue(pair: 0)).isEmpty)
        #expect(lifecycle.handle(.acquired(pair: 0, term: 2)).isEmpty)
    }
}
