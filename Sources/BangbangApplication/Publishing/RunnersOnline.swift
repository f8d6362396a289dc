// Approved runners watching each board, over every node, for `board.stats`: each node reports once
// a second, on `bb.node.<id>.watching`, the runners it holds watching each type; the union of the
// reports heard in the last five seconds is who is online. A runner watching on two nodes counts
// once, as on one node ("a runner counts once per type however many devices watch"), and a node
// that stops reporting (it died, or lost NATS) drops out after five seconds. A report also counts
// the node's connections and the users logged in on them, which `admin.stats` adds to the owner's
// own (a user connected to two nodes counts on each). Pure: the node's subscriber hands it each
// report and asks it when `board.stats` or `admin.stats` comes.
import BangbangCore
import JSON
import Synchronization

/// The subjects of the reports: one per node, and the wildcard an owner hears them all on.
package enum WatchingSubjects {
    package static let everyNode = "bb.node.*.watching"

    package static func subject(of node: String) -> String { "bb.node.\(node).watching" }
}

/// One node's report: `{"connections": 3, "node": "bb2", "users": 2, "watching": {"bounty": [42, 7],
/// "express": []}}` (a report without the two counts, from a version before them, counts none).
package struct WatchingReport: Sendable, Equatable {
    /// A node id is what `--node-id` allows; a longer one is no report.
    static let maximumNodeLength = 64

    let node: String
    let watching: [OrderType: Set<UserID>]
    /// The node's client connections, and the distinct users logged in on them.
    package var connections = 0
    var users = 0

    package func encoded() -> [UInt8] {
        let boards = Dictionary(uniqueKeysWithValues: watching.map { type, runners in
            (type.rawValue, JSONValue.array(runners.map(\.rawValue).sorted().map { .integer(Int64($0)) }))
        })
        return JSONWriter.encode(["connections": .integer(Int64(connections)), "node": .string(node),
                                  "users": .integer(Int64(users)), "watching": .object(boards)])
    }

    /// The report in `bytes`, or nil when they are not one (read whole: anything unknown refuses it).
    package static func decode(_ bytes: [UInt8]) -> WatchingReport? {
        guard case .object(let report)? = try? JSONParser.parse(bytes),
              case .string(let node)? = report["node"], (1...maximumNodeLength).contains(node.utf8.count),
              case .object(let boards)? = report["watching"] else { return nil }
        let counts = (report["connections"], report["users"])
        var (connections, users) = (0, 0)
        switch counts {
        case (nil, nil) where report.count == 2:
            break
        case (.integer(let connected)?, .integer(let loggedIn)?) where report.count == 4 && connected >= 0 && loggedIn >= 0:
            (connections, users) = (Int(connected), Int(loggedIn))
        default:
            return nil
        }
        var watching: [OrderType: Set<UserID>] = [:]
        for (name, value) in boards {
            guard let type = OrderType(rawValue: name), case .array(let ids) = value else { return nil }
            var runners = Set<UserID>()
            for id in ids {
                guard case .integer(let raw) = id, raw > 0 else { return nil }
                runners.insert(UserID(UInt64(raw)))
            }
            watching[type] = runners
        }
        return WatchingReport(node: node, watching: watching, connections: connections, users: users)
    }

    package init(node: String, watching: [OrderType: Set<UserID>], connections: Int = 0, users: Int = 0) {
        self.node = node
        self.watching = watching
        self.connections = connections
        self.users = users
    }
}

package struct RunnersOnline: Sendable {
    static let reportLifetimeMilliseconds: Int64 = 5_000

    private var latest: [String: (at: Int64, report: WatchingReport)] = [:]

    /// A node's report, heard at `now` (milliseconds): it replaces that node's earlier one.
    package mutating func heard(_ report: WatchingReport, at now: Int64) {
        latest[report.node] = (now, report)
    }

    /// Who watches each type now, over the nodes heard from in the last five seconds. Forgets the
    /// nodes not heard from for longer.
    mutating func online(at now: Int64) -> [OrderType: Set<UserID>] {
        forgetSilentNodes(at: now)
        var online: [OrderType: Set<UserID>] = [:]
        for (_, heard) in latest {
            for (type, runners) in heard.report.watching { online[type, default: []].formUnion(runners) }
        }
        return online
    }

    /// The connections and logged-in users of the nodes heard from in the last five seconds, summed.
    package mutating func sessions(at now: Int64) -> (connections: Int, users: Int) {
        forgetSilentNodes(at: now)
        return latest.values.reduce((0, 0)) { ($0.0 + $1.report.connections, $0.1 + $1.report.users) }
    }

    private mutating func forgetSilentNodes(at now: Int64) {
        latest = latest.filter { now - $0.value.at <= Self.reportLifetimeMilliseconds }
    }
}

/// The runners other nodes report, as the board partition's owner hears them (any thread). On a
/// single node nothing is ever heard, and `board.stats` counts the node's own watchers only.
package final class RunnersElsewhere: Sendable {
    private let runners = Mutex(RunnersOnline())

    package func heard(_ report: WatchingReport, at now: Int64) {
        runners.withLock { $0.heard(report, at: now) }
    }

    func online(at now: Int64) -> [OrderType: Set<UserID>] {
        runners.withLock { $0.online(at: now) }
    }

    package func sessions(at now: Int64) -> (connections: Int, users: Int) {
        runners.withLock { $0.sessions(at: now) }
    }
}
