// Runs blocking work (a semaphore wait, a child's exit) on a Dispatch thread rather than on one
// of the concurrency pool's threads: the pool has one thread per core, and a blocked pool can
// leave the very task being waited for with no thread to run on.
import Dispatch

public func offThePool<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}
