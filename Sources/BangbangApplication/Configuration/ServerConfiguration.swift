// Everything an operator can set, in one `Sendable` value with a documented default for each.
// The defaults are the embedded default: a development server on 127.0.0.1:8080 with its data
// in ./data, no TLS, SMS codes logged. `SettingsTable` maps each field to its flag, environment
// variable and config-file key; `ConfigurationLoader` applies them in order of precedence.
import BangbangCore
import Forwarding

/// A setting that cannot be used as given, in words that say which and why.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

public enum FsyncPolicy: Sendable, Hashable {
    /// Acknowledged means on disk: every batch of records is fdatasync'ed before any reply.
    case always
    /// Records are written before the reply and fsynced every N milliseconds: a crash of the
    /// machine (not of the process) may lose up to that window.
    case interval(milliseconds: Int)
    /// No fsync at all; the OS flushes when it likes. For tests and benchmarks only.
    case never
}

public struct ServerConfiguration: Sendable {
    /// Loopback by default so a development server is not exposed by accident.
    public var host = "127.0.0.1"
    public var port = 8080
    /// Relative to the working directory, so `swift run` keeps its data next to the checkout.
    public var dataDirectory = "./data"
    /// `/echo` is for conformance suites and monitoring; off unless asked for.
    public var enablesEcho = false
    public var tlsCertificatePath: String?
    public var tlsKeyPath: String?
    /// Development mode: the SMS provider returns the code in the reply (`devCode`).
    public var isDevelopment = false
    /// A shell command that delivers each SMS code; nil writes codes to the log instead (the
    /// embedded default, which needs no SMS gateway to try the app).
    public var smsCommand: String?
    /// Phones whose users are administrators (E.164 or bare mainland numbers).
    public var adminPhones: [String] = []
    /// Served to clients by `info.get` for the "call support" button.
    public var supportPhone: String?
    /// The campuses this deployment serves; empty means any campus name is accepted.
    public var campuses: [String] = []
    /// Browser origins allowed to open WebSockets; empty allows any (native apps send none).
    /// The server's own origin (the page it served) is always allowed.
    public var allowedOrigins: [String] = []
    /// The web app at `/` and the console at `/admin/`: on by default, so a phone on the
    /// network is a client with nothing to install.
    public var servesWeb = true
    /// The folder the web app is served from; nil finds the one beside the binary (`WebFolder`).
    public var webDirectory: String?
    /// Connections one client address may hold open; stops one host from taking every descriptor.
    public var maxConnectionsPerAddress = 1_000
    /// SMS codes one client IP may request per hour (0: no limit). Twenty lets a campus NAT log
    /// in while capping SMS-pumping from one host; a load test from loopback sets 0.
    public var smsPerIPHourly = 20
    /// The wait before a phone may be sent another code, whatever its purpose: a minute, as SMS
    /// logins commonly ask, so one number cannot be flooded; tests of several codes set 0.
    public var smsResendSeconds = 60
    /// Event loops for connections; one per core keeps every core busy without contention.
    public var eventLoops = 0
    /// `always` by default: an acknowledged change survives power loss.
    public var fsyncPolicy = FsyncPolicy.always
    /// A snapshot every 5 minutes bounds recovery time without costing much I/O.
    public var snapshotIntervalSeconds = 300
    /// …or sooner once the journal has grown by 64 MiB since the last snapshot.
    public var snapshotJournalBytes = 64 * 1024 * 1024
    /// Board shards per order type; each is a serial owner of its own.
    public var shardsPerType = 4
    /// Above the file limit here (20,000) so that the limit, not this, is what binds by default.
    public var maxConnections = 100_000
    /// Largest WebSocket message on `/ws`: protocol messages are small; 64 KiB is generous.
    public var maxMessageBytes = 64 * 1024
    /// Output queued for a client above this is a slow consumer: it is closed with 1008.
    public var maxOutputBytes = 4 * 1024 * 1024
    /// Personal events kept in memory per user for `auth.resume`: a phone that drops off for a
    /// few minutes misses a handful; one gone longer refetches (`resync`). Memory per user is
    /// bounded by this and `streamBytes`, not by history.
    public var streamEvents = 32
    /// …and at most this many bytes of them per user (an `order.changed` is about 1 KiB).
    public var streamBytes = 8 * 1024
    /// A connection that has not completed its handshake by then is closed.
    public var handshakeTimeoutSeconds = 10
    /// Seconds without traffic before the server pings; a missing pong closes the connection.
    public var pingIntervalSeconds = 30
    public var logLevel = "info"
    /// Requests one connection may make per second, with bursts of twice that: an app opening a
    /// screen fires a handful at once, and 50/s sustained is far above any human's pace. 0: none.
    public var requestsPerSecond = 50
    /// Requests one user may make per second across all their connections (burst: twice that),
    /// so opening more connections does not multiply a user's budget. 0: no limit.
    public var userRequestsPerSecond = 100
    /// WebSocket handshakes one client address may start per second (burst: twice that). A
    /// campus NAT reconnecting after a restart stays under it; a reconnect loop does not. 0: none.
    public var handshakesPerSecondPerAddress = 100
    /// The order rules an operator may tune, read at start; their defaults and the reasons for
    /// them are `OrderRules`'. A change applies to decisions made from then on: a fee or an
    /// auto-confirm time already recorded stays as it was.
    /// Seconds after acceptance during which a publisher cancels free of charge.
    public var cancelGraceSeconds = Int(OrderRules().cancellationGrace / 1000)
    /// Fen paid to the runner when the publisher cancels after the grace window.
    public var cancelFee = Int(OrderRules().cancellationFee)
    /// Hours after delivery before an unconfirmed order completes by itself.
    public var autoConfirmHours = Int(OrderRules().autoConfirmAfter / 3_600_000)
    /// Days after an order closed during which it can still be rated; after that it leaves the
    /// board shards for the archive.
    public var ratingWindowDays = Int(OrderRules().ratingWindow / 86_400_000)
    /// Proxies whose word about the client's address is taken (`--trusted-proxy`): the PROXY
    /// protocol header and `Forwarded` / `X-Forwarded-For` count only from them. None by
    /// default: a server that was not told about its proxies believes no one.
    public var trustedProxies: [AddressRange] = []
    /// Every connection starts with a PROXY protocol header from a trusted proxy (HAProxy's
    /// `send-proxy-v2`, a cloud TCP load balancer). Off by default: the specification forbids
    /// guessing, so with it on the port serves only the proxies.
    public var expectsProxyProtocol = false
    /// The NATS servers of a cluster (`--nats`, each `nats://host:port`, checked when the setting
    /// is read). Empty, the default: one node on its own, its journal and snapshots in the data
    /// directory, no NATS needed.
    public var natsServers: [String] = []
    /// This node's name among the cluster's nodes (`--node-id`); empty means the host name.
    /// Each node of a cluster needs its own.
    public var nodeID = ""
    /// How long a partition lease lasts without renewal, in milliseconds (`--lease-ms`): the
    /// bound on how long a dead node's partitions stay unserved, before their replay.
    public var leaseMilliseconds = 6_000
    /// How long a node that rejoins must stay live before the partition it ranks first for moves
    /// back to it, in milliseconds (`--move-back-ms`, at least a lease time); 0, the default:
    /// the partition stays with its holder until that one stops or dies.
    public var moveBackMilliseconds = 0
    /// Where a node that owns no partition runs its clients' sessions (`--cluster-sessions`):
    /// relayed whole to the owner (the default), or here, each request routed to the partition
    /// that decides it and the events followed over NATS, so the clients outlive an owner's death.
    public var clusterSessions = ClusterSessions.relay
    /// How many pairs of partitions the cluster has (`--partitions`, the same on every node): the
    /// boards of the campuses that hash to `k` and the accounts of the users whose id is `k` modulo
    /// it are pair `k`, owned by one node at a time. 1, the default: one node owns everything and
    /// the others stand by. Above 1, each node owns some pairs and runs the sessions of the clients
    /// it holds, as with `--cluster-sessions node`.
    public var partitions = 1

    /// Whether this node is one of several sharing partitions over NATS.
    public var isClustered: Bool { !natsServers.isEmpty }

    /// Whether the cluster's pairs are spread over its nodes (`--partitions` above 1).
    public var isPartitioned: Bool { partitions > 1 }

    /// Whether a node runs the sessions of the clients it holds rather than relaying them.
    public var runsSessionsOnEveryNode: Bool { clusterSessions == .node || isPartitioned }

    public init() {}
}

/// Where a cluster node that owns no partition runs the sessions of the clients it holds.
public enum ClusterSessions: String, Sendable, CaseIterable {
    /// Every message relayed to the partition's owner, which runs the session (RelayGateway.swift).
    case relay
    /// The session runs on this node (NodeSession.swift): requests routed, events followed.
    case node
}
