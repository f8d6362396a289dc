// A value guarded by a lock, for the few pieces of state that threads share (counters, the
// personal streams). Everything else is confined to one serial queue instead.
import Foundation

public final class Mutex<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
