// Per client address: how many connections it holds open (so one host cannot take every
// descriptor the process has) and how fast it starts handshakes (so a reconnect loop or a
// handshake flood from one host is refused with 429 before it costs a parse or a TLS session).
// A lock per connection open and close is cheap next to the accept itself. The address is the
// client's as `ClientOrigin` resolves it, behind trusted proxies too.
import Forwarding
import Synchronization

package final class AddressLimiter: Sendable {
    private let maximum: Mutex<Int>
    private let counts = Mutex<[IPAddress: Int]>([:])
    private let handshakes: KeyedRateLimiter<IPAddress>

    /// - Parameter handshakesPerSecond: sustained handshakes per address, bursts of twice that;
    ///   0 (the default, for callers that predate the setting) means no rate limit.
    package init(limit: Int, handshakesPerSecond: Int = 0) {
        self.maximum = Mutex(limit)
        self.handshakes = KeyedRateLimiter(ratePerSecond: handshakesPerSecond, capacity: handshakesPerSecond * 2)
    }

    package var limit: Int { maximum.withLock { $0 } }

    /// New limits (a configuration reload). Connections already open stay open; an address over
    /// a lowered limit is refused new ones until enough of them close.
    package func update(limit: Int, handshakesPerSecond: Int) {
        maximum.withLock { $0 = limit }
        handshakes.update(ratePerSecond: handshakesPerSecond, capacity: handshakesPerSecond * 2)
    }

    /// Counts one more connection from `address`; false (and nothing counted) when at the limit.
    package func acquire(_ address: IPAddress) -> Bool {
        let limit = self.limit
        return counts.withLock { table in
            let current = table[address, default: 0]
            guard current < limit else { return false }
            table[address] = current + 1
            return true
        }
    }

    package func release(_ address: IPAddress) {
        counts.withLock { table in
            guard let current = table[address] else { return }
            table[address] = current > 1 ? current - 1 : nil
        }
    }

    /// Whether `address` may start another handshake at `now` (milliseconds, monotonic).
    package func admitHandshake(from address: IPAddress, now: Int64) -> Bool {
        handshakes.admit(address, now: now)
    }
}
