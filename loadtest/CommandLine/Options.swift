// What a run was asked to do. Every default is chosen so that a bare
// `loadtest <scenario> --url …` does something small and meaningful.

enum Scenario: String, CaseIterable, Sendable {
    case echo, connections, feed, race, errand, durable

    var summary: String {
        switch self {
        case .echo: "round trips of fixed-size messages through the server's /echo endpoint"
        case .connections: "open N sessions, hold them, report connect rate and server RSS per connection"
        case .feed: "runners subscribed to boards, publishers publishing; delivery latency, gaps, duplicates"
        case .race: "K runners accept each of M orders at once; exactly one may win"
        case .errand: "whole errands of all four types with progress, cancellations and reconnects"
        case .durable: "acknowledged publishes per second from concurrent publishers"
        }
    }
}

struct Options: Equatable, Sendable {
    var scenario: Scenario
    var url: TargetURL
    /// Where runners connect instead of `url`, in turn by tag (the nodes of a cluster).
    var runnerURLs: [TargetURL] = []
    /// Connections (echo, connections). Echo defaults to 1, the latency-bound case; the
    /// connections scenario to 1,000, enough to see a per-connection cost above noise.
    var connections: Int
    /// Echo messages in flight per connection. 16 keeps the pipe full without queueing much.
    var window = 16
    /// Length of the measured phase. Ten seconds smooths over scheduler noise.
    var durationSeconds: Double = 10
    /// Echo payload. 100 bytes: the size of a typical small protocol message.
    var messageSize = 100
    /// Loopback source addresses 127.0.0.2…; nil picks one per 1,000 connections for a
    /// loopback target (the server's default per-address connection cap) and none otherwise.
    var sources: Int?
    /// Driver processes; each may hold at most 20,000 descriptors on these machines.
    var processes = 1
    /// Event loops per process; default one per core.
    var threads: Int
    /// Offer permessage-deflate.
    var compress = false
    /// Log every connection in (connections scenario).
    var login = false
    /// Server process to read RSS from (/proc/PID/status).
    var serverPID: Int32?
    var jsonPath: String?
    /// An SVG picture of the run: latency distribution and throughput over time.
    var plotPath: String?
    /// No progress line (children of a multi-process run).
    var quiet = false
    /// Handshakes in flight at once while connecting. 256 stays far below the accept backlog,
    /// so a connect storm measures the server rather than SYN retransmits.
    var connectConcurrency = 256
    /// Check the server's TLS certificate (off by default: load-test servers are self-signed).
    var verifiesCertificates = false
    /// Runners (feed, race, errand).
    var runners = 100
    /// Publishers (feed, errand, durable). Durable's figure is defined at 100 publishers with one
    /// request each in flight; errand defaults to 10 (several errands overlap per publisher);
    /// feed to 1.
    var publishers: Int?
    /// Total publishes per second (feed, errand). 10/s is the figure the targets are quoted at.
    var rate: Double = 10
    /// Order types the runners subscribe to and publishers publish (feed, errand).
    var types: [String] = []
    /// Campuses publishers take in turn (durable; default North): a cluster of several pairs
    /// spreads the publishes over its partitions by campus.
    var campuses: [String] = []
    /// Orders to race for (race).
    var orders = 10
    /// The administrator phone the server was started with (approves runners).
    var adminPhone: String?
    /// Position of this process among `processCount` (set by the parent of a multi-process run).
    var processIndex = 0
    var processCount = 1

    init(scenario: Scenario, url: TargetURL, threads: Int) {
        self.scenario = scenario
        self.url = url
        self.threads = threads
        connections = scenario == .connections ? 1000 : 1
    }

    /// This process's share of `total` when the work is split over `processCount` processes.
    func share(of total: Int) -> Int {
        Self.share(of: total, index: processIndex, count: processCount)
    }

    static func share(of total: Int, index: Int, count: Int) -> Int {
        precondition(count > 0 && (0..<count).contains(index), "process index out of range")
        return total / count + (index < total % count ? 1 : 0)
    }

    var effectivePublishers: Int { publishers ?? (scenario == .durable ? 100 : scenario == .errand ? 10 : 1) }

    var effectiveSources: Int {
        if let sources { return sources }
        guard url.isIPv4Loopback else { return 0 }
        let total = max(connections, runners + effectivePublishers)
        return min(250, max(1, (total + 999) / 1_000))
    }
}

enum Command: Equatable, Sendable {
    case run(Options)
    case compare(first: String, second: String)
    case help(Scenario?)
}
