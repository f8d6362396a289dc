// A handler set once and called for the life of the process (an archived batch, a stored journal
// message) costs the same on its millionth call as on its first: reading it never wraps it in
// more thunks (HandlerSlot.swift says how a closure kept as a Mutex's value does). Kept as the
// value, these 200,000 calls would run through thunks as deep as the calls before them and take
// hours, so the suite's time limit ends the test; here they take milliseconds.
import Synchronization
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.timeLimit(.minutes(1))) struct HandlerSlotTests {
    @Test func aHandlerCalledTwoHundredThousandTimesRunsEachCallOnce() async throws {
        let slot = HandlerSlot<(records: Int, seconds: Double)>()
        slot((1, 0))   // nothing set: nothing runs
        let total = Atomic<Int>(0)
        slot.set { total.add($0.records, ordering: .relaxed) }
        // In rounds, so the time limit's cancellation ends a run that has slowed to a crawl.
        for _ in 0..<200 {
            for _ in 0..<1_000 { slot((1, 0.5)) }
            try Task.checkCancellation()
        }
        #expect(total.load(ordering: .relaxed) == 200_000)
        // A later handler replaces the first.
        let later = Atomic<Int>(0)
        slot.set { later.add($0.records, ordering: .relaxed) }
        slot((5, 0))
        #expect(total.load(ordering: .relaxed) == 200_000 && later.load(ordering: .relaxed) == 5)
    }
}
