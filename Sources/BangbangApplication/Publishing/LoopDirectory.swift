// The event loops' registries as the publishing side sees them: held weakly (they belong to the
// server, and hold the sessions, which hold the application), and empty until the server attaches
// them, so that a replay at start-up numbers events without delivering them to anyone.
import Synchronization

package final class LoopDirectory: Sendable {
    private let state = Mutex<(registries: [WeakRegistry], isLive: Bool)>(([], false))

    package struct WeakRegistry: Sendable {
        weak var registry: LoopRegistry?
    }

    /// Starts live delivery to `registries`, indexed by loop. Call once, before serving.
    package func attach(_ registries: [LoopRegistry]) {
        state.withLock { $0 = (registries.map { WeakRegistry(registry: $0) }, true) }
    }

    /// The registries by loop index, or nil while nothing is live (a replay).
    var live: [WeakRegistry]? {
        state.withLock { $0.isLive ? $0.registries : nil }
    }

    /// Every loop's registry, for what must visit them all (statistics, logging a session out).
    package var registries: [LoopRegistry] { state.withLock { $0.registries.compactMap(\.registry) } }

    /// The registries of the loops whose bits are set in `loops` (`Presence`).
    package func registries(in loops: UInt64) -> [LoopRegistry] {
        var found: [LoopRegistry] = []
        Self.forEach(in: loops, of: state.withLock { $0.registries }) { found.append($0) }
        return found
    }

    /// Calls `body` with each registry of `registries` (indexed by loop) whose bit is set in
    /// `loops`, in loop order, without collecting them (a personal event's fan-out).
    static func forEach(in loops: UInt64, of registries: [WeakRegistry], _ body: (LoopRegistry) -> Void) {
        var bits = loops
        while bits != 0 {
            let index = bits.trailingZeroBitCount
            bits &= bits - 1
            if index < registries.count, let registry = registries[index].registry { body(registry) }
        }
    }
}
