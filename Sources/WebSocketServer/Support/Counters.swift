// The counters the transport and the server bump: lock-free atomics for what moves on every
// message on every loop, a short lock for labelled counts (per request, per close, per
// handshake failure), off the per-byte paths. Rendering them is the server's business.
import Synchronization

package final class Counter: Sendable {
    @usableFromInline let value = Atomic<Int>(0)
    package init() {}
    @inlinable package func increment() { value.add(1, ordering: .relaxed) }
    @inlinable package func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
    package var current: Int { value.load(ordering: .relaxed) }
}

package final class Gauge: Sendable {
    @usableFromInline let value = Atomic<Int>(0)
    package init() {}
    @inlinable package func set(_ newValue: Int) { value.store(newValue, ordering: .relaxed) }
    @inlinable package func add(_ amount: Int) { value.add(amount, ordering: .relaxed) }
    package var current: Int { value.load(ordering: .relaxed) }
}

package final class LabeledCounter: Sendable {
    private let values = Mutex<[String: Int]>([:])
    package init() {}
    package func increment(label: String) { values.withLock { $0[label, default: 0] += 1 } }
    package var current: [String: Int] { values.withLock { $0 } }
}
