// Counts open connections per client address, so one host cannot take every descriptor the
// process has. A lock per connection open and close is cheap next to the accept itself.
final class AddressLimiter: Sendable {
    let limit: Int
    private let counts = Mutex<[String: Int]>([:])

    init(limit: Int) { self.limit = limit }

    /// Counts one more connection from `address`; false (and nothing counted) when at the limit.
    func acquire(_ address: String) -> Bool {
        counts.withLock { table in
            let current = table[address, default: 0]
            guard current < limit else { return false }
            table[address] = current + 1
            return true
        }
    }

    func release(_ address: String) {
        counts.withLock { table in
            guard let current = table[address] else { return }
            table[address] = current > 1 ? current - 1 : nil
        }
    }

    func count(for address: String) -> Int { counts.withLock { $0[address] ?? 0 } }
}
