import Dispatch
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct PartitionGatherTests {
    @Test func completesOnceWhenEveryPartHasComeWhateverTheirOrder() {
        let gathered = PartitionGather<Int, String>(expected: 3)
        guard case .waiting = gathered.add(2), case .waiting = gathered.add(0) else { Issue.record("ended early"); return }
        guard case .complete(let parts) = gathered.add(1) else { Issue.record("not complete with every part in"); return }
        #expect(parts.sorted() == [0, 1, 2])
        guard case .waiting = gathered.add(3), case .waiting = gathered.refuse("late") else { Issue.record("ended twice"); return }
    }

    @Test func theFirstRefusalEndsTheReadAndWhatComesAfterIsDropped() {
        let gathered = PartitionGather<Int, String>(expected: 3)
        _ = gathered.add(0)
        guard case .refused(let refusal) = gathered.refuse("partition 1 has no owner") else { Issue.record("a refusal did not end it"); return }
        #expect(refusal == "partition 1 has no owner")
        guard case .waiting = gathered.refuse("another"), case .waiting = gathered.add(1), case .waiting = gathered.add(2) else {
            Issue.record("a read ended twice")
            return
        }
    }

    @Test func partsArrivingTogetherOnManyThreadsEndItExactlyOnce() {
        for _ in 0..<50 {
            let gathered = PartitionGather<Int, String>(expected: 16)
            let ends = RecordedEnds()
            DispatchQueue.concurrentPerform(iterations: 16) { part in
                if case .complete(let parts) = gathered.add(part) { ends.record(parts.count) }
            }
            #expect(ends.counts == [16])
        }
    }
}

import Synchronization

private final class RecordedEnds: Sendable {
    private let state = Mutex<[Int]>([])
    func record(_ count: Int) { state.withLock { $0.append(count) } }
    var counts: [Int] { state.withLock { $0 } }
}
