// A closure set once (or now and then) and called from any thread: what an owner is told of a
// failed append, of an archived batch, of a stored journal message.
//
// It is kept in a class inside the lock, never as the lock's value itself. Reading a closure out
// of `Mutex.withLock { $0 }` goes through the body's `inout` parameter, and its write-back wraps
// the stored closure in two more reabstraction thunks on every read: each call then runs through
// all the thunks of the calls before it (20,000 calls took 7.6 s, the next 20,000 took 21.7 s,
// and the thunks are kept in memory). A class reference has one representation, so reading it
// changes nothing, and a call costs the same forever.
import Synchronization

package final class HandlerSlot<Input>: Sendable {
    private final class Handler: Sendable {
        let call: @Sendable (Input) -> Void
        init(_ call: @escaping @Sendable (Input) -> Void) { self.call = call }
    }

    private let handler = Mutex<Handler?>(nil)

    package init() {}

    /// Replaces the closure later calls run.
    package func set(_ call: @escaping @Sendable (Input) -> Void) {
        handler.withLock { $0 = Handler(call) }
    }

    /// Runs the closure set, if any, on the calling thread (not under the lock).
    package func callAsFunction(_ input: Input) {
        handler.withLock { $0 }?.call(input)
    }
}
