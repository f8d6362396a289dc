// Which event loops hold a logged-in connection of each user, so the account half of the
// publisher posts a personal event only to the loops that have someone to give it to.
import BangbangCore
import Synchronization

/// Which loops hold a logged-in connection of each user: a bit per loop (at most 64, the
/// `--event-loops` limit). Written by the loops as sessions log in and out, read by the publisher.
/// There is an entry per connected user, and a server runs about a loop per core, so the bits
/// are kept in a byte per user until a loop numbered 8 or more adds a user, and in 64 bits from
/// then on.
package final class Presence: Sendable {
    private enum Table {
        case narrow([UserID: UInt8])
        case wide([UserID: UInt64])
    }

    private let table = Mutex<Table>(.narrow([:]))

    package func add(_ user: UserID, onLoop index: Int) {
        table.withLock { table in
            switch table {
            case .narrow(var loops) where index < UInt8.bitWidth:
                // Out of the enum first, so the dictionary is uniquely referenced and changes in place.
                table = .narrow([:])
                loops[user, default: 0] |= 1 << UInt8(index)
                table = .narrow(loops)
            case .narrow(let loops):
                var wide = loops.mapValues(UInt64.init)
                wide[user, default: 0] |= 1 << UInt64(index)
                table = .wide(wide)
            case .wide(var loops):
                table = .wide([:])
                loops[user, default: 0] |= 1 << UInt64(index)
                table = .wide(loops)
            }
        }
    }

    package func remove(_ user: UserID, fromLoop index: Int) {
        table.withLock { table in
            switch table {
            case .narrow(var loops):
                guard index < UInt8.bitWidth, let bits = loops[user] else { return }
                table = .narrow([:])
                let remaining = bits & ~(1 << UInt8(index))
                loops[user] = remaining == 0 ? nil : remaining
                table = .narrow(loops)
            case .wide(var loops):
                guard let bits = loops[user] else { return }
                table = .wide([:])
                let remaining = bits & ~(1 << UInt64(index))
                loops[user] = remaining == 0 ? nil : remaining
                table = .wide(loops)
            }
        }
    }

    /// Users with at least one logged-in connection now (`bangbang_logged_in_users`).
    package var userCount: Int {
        table.withLock { table in
            switch table {
            case .narrow(let loops): loops.count
            case .wide(let loops): loops.count
            }
        }
    }

    func loops(of user: UserID) -> UInt64 {
        table.withLock { table in
            switch table {
            case .narrow(let loops): UInt64(loops[user] ?? 0)
            case .wide(let loops): loops[user] ?? 0
            }
        }
    }
}
