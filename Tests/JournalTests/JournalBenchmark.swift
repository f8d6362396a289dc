import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Journal

/// A measuring tool, not a test: run with
/// `JOURNAL_BENCHMARK=1 swift test --filter JournalBenchmark` (add `-c release` for real numbers).
/// It prints throughput and how many appends each fdatasync carried; it asserts only correctness.
@Suite struct JournalBenchmark {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["JOURNAL_BENCHMARK"] != nil))
    func measureGroupCommitThroughput() throws {
        let appends = 50_000
        let body = [UInt8](repeating: 0x5A, count: 128)
        for policy: SyncPolicy in [.always, .interval(milliseconds: 10), .never] {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let (journal, _) = try openJournal(directory, configuration(policy))
            let failures = Atomic<Int>(0)
            let done = DispatchGroup()
            let clock = ContinuousClock()
            let elapsed = clock.measure {
                DispatchQueue.concurrentPerform(iterations: 8) { worker in
                    for _ in 0..<appends / 8 {
                        done.enter()
                        journal.append(body) { result in
                            if case .failure = result { failures.add(1, ordering: .relaxed) }
                            done.leave()
                        }
                    }
                }
                done.wait()
            }
            let statistics = journal.statistics
            try journal.close()
            #expect(failures.load(ordering: .relaxed) == 0)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("journal benchmark \(policy): \(appends) appends of \(body.count) B in \(elapsed), "
                  + "\(Int(Double(appends) / seconds)) appends/s, \(statistics.batches) batches, \(statistics.syncs) syncs, "
                  + "\(appends / max(1, statistics.batches)) appends per batch")
        }
    }
}
