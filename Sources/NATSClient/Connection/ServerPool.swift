// Which server to try next, and how long to wait first: a sans-I/O policy, so reconnect
// behaviour is tested without sockets or clocks.
//
// Servers are tried in turn starting after the one that failed. Within a round there is no
// wait (another server of a healthy cluster should answer at once); after a round in which
// every server failed, the wait doubles from `initialWait` up to `maximumWait`, plus up to half
// of it as jitter. A successful handshake resets the rounds.

struct ServerPool {
    private(set) var servers: [NATSServerAddress]
    private var cursor = -1
    private var failuresInRound = 0
    private var failedRounds = 0
    let initialWait: Int
    let maximumWait: Int

    init(servers: [NATSServerAddress], initialWait: Int, maximumWait: Int) {
        precondition(!servers.isEmpty, "a server pool needs at least one server")
        self.servers = servers
        self.initialWait = initialWait
        self.maximumWait = max(initialWait, maximumWait)
    }

    /// The next server, and how many milliseconds to wait before connecting to it.
    mutating func nextAttempt(using random: inout some RandomNumberGenerator) -> (server: NATSServerAddress, waitMilliseconds: Int) {
        var wait = 0
        if failuresInRound >= servers.count {
            failuresInRound = 0
            failedRounds += 1
        }
        if failedRounds > 0 && failuresInRound == 0 {
            let base = min(maximumWait, initialWait << min(failedRounds - 1, 20))
            wait = base + (base > 1 ? Int.random(in: 0...(base / 2), using: &random) : 0)
        }
        cursor = (cursor + 1) % servers.count
        return (servers[cursor], wait)
    }

    /// The attempt returned last failed.
    mutating func recordFailure() {
        failuresInRound += 1
    }

    /// The attempt returned last succeeded.
    mutating func recordSuccess() {
        failuresInRound = 0
        failedRounds = 0
    }

    /// True once every server has failed at least once since the last success.
    var hasFailedEveryServer: Bool { failedRounds > 0 || failuresInRound >= servers.count }

    /// Adds servers the cluster announced; known ones are ignored.
    mutating func add(urls: [String]) {
        for url in urls {
            guard let address = NATSServerAddress(url: url), !servers.contains(address) else { continue }
            servers.append(address)
        }
    }
}
