// swift-tools-version:6.0
// Bangbang: a real-time dispatch server for campus errand apps.
// Imports point one way, downward. The top three modules are the jobs of the server:
//   bangbang (the executable: settings, signals, exits as asked; `bangbang admin`)
//     → ScaleOut (several nodes over NATS JetStream: a node's lifecycle and leases, the partitions'
//                 stream journals and inbox, relayed clients, sessions on any node, what spans
//                 the pairs of partitions)
//       → PartitionOwner (what the owner of a partition answers other nodes, and the events it
//                         publishes for them)
//       → BangbangServer (the application served on sockets: routes, endpoints, web files, settings)
//         → BangbangApplication (state, owners, the commit log, operations, publishing, sessions and
//                                request admission; made from an ApplicationStorage, imports no NATS
//                                and never ends the process)
// Below them, each with one job:
//   BangbangApplication → {WebSocketServer, BangbangProtocol → BangbangCore, Journal,
//                          BangbangStorage → BangbangCore, OrderArchive → CSQLite, InboxProtocol}
//   WebSocketServer (each client connection, routes, per-address limits) imports no Bangbang module:
//   the server hands it endpoints, a log (`EventLog`) and its site's files (`StaticContent`)
//            → {SocketServer → Forwarding, WebSocketProtocol} → Crypto → C shims (CZlib, COpenSSL; CLinux).
//   Journal, SocketServer and the application → Platform (one `Errno`, every file, socket and epoll
//   call, faults injected per `Syscalls` value) → CLinux.
//   BangbangProtocol → JSON (the strict parser and writer, re-exported); JSON imports nothing.
//   Forwarding (client addresses through proxies: PROXY protocol, Forwarded headers, CIDR
//   trust) imports nothing.
//   BangbangClient (the app library) → {SocketServer, WebSocketProtocol on Linux; JSON}, so an
//   app built for Apple platforms links no C library; only the admin CLI in the executable
//   (bangbang → BangbangClient) uses it, never the server library.
//   ScaleOut, PartitionOwner → Cluster (partitions of a multi-node deployment, their leases, journals and inbox on
//   JetStream, and a node's lifecycle; its decisions are pure, the NATS calls thin)
//            → {NATSClient → {NATSProtocol, SocketServer, JSON, Crypto}, InboxProtocol, JournalProtocol}.
//   Sans-I/O, no imports, fuzzed: NATSProtocol (the NATS client protocol), RelayProtocol (frames
//   between a gateway node and the owner about relayed WebSocket connections), InboxProtocol
//   (personal events crossing from the partition that committed a change to the partition that
//   numbers its users' streams), JournalProtocol (a partition journal's batches of numbered records).
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Bangbang",
    // For BangbangClient on Apple platforms (Clock, Duration, AsyncStream.makeStream); the server
    // itself builds on Linux only.
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "bangbang", targets: ["bangbang"]),
        .executable(name: "loadtest", targets: ["loadtest"]),
        .library(name: "BangbangClient", targets: ["BangbangClient"]),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        // The one door to the operating system: `Errno`, and every file, socket and epoll call the
        // journal and the transport make, with per-instance fault injection for tests.
        .target(name: "Platform", dependencies: ["CLinux"], swiftSettings: strict),
        .target(name: "Crypto", dependencies: ["COpenSSL", "CZlib"], swiftSettings: strict),
        .target(name: "WebSocketProtocol", dependencies: ["Crypto", "CZlib"], swiftSettings: strict),
        .target(name: "Forwarding", swiftSettings: strict),
        .target(name: "SocketServer", dependencies: ["COpenSSL", "CLinux", "Forwarding", "Platform"], swiftSettings: strict),
        .target(name: "BangbangCore", dependencies: ["Crypto"], swiftSettings: strict),
        .target(name: "Journal", dependencies: ["Crypto", "CZlib", "Platform"], swiftSettings: strict),
        .target(name: "JSON", swiftSettings: strict),
        // What is stored on disk, in the keyed binary form: journal entries and snapshots.
        .target(name: "BangbangStorage", dependencies: ["BangbangCore"], swiftSettings: strict),
        .target(name: "BangbangProtocol", dependencies: ["BangbangCore", "JSON"], swiftSettings: strict),
        // The Swift library apps are written on: typed requests, events and errors, resume and
        // reconnect. On Linux it speaks through the project's own sockets, TLS and WebSocket
        // code; on Apple platforms through URLSessionWebSocketTask.
        .target(name: "BangbangClient",
                dependencies: ["JSON",
                               .target(name: "WebSocketProtocol", condition: .when(platforms: [.linux])),
                               .target(name: "SocketServer", condition: .when(platforms: [.linux]))],
                exclude: ["README.md"], swiftSettings: strict),
        // Serving WebSocket and plain HTTP clients on the sockets: each connection's handshake,
        // pings, timeouts and slow-consumer rule, the routes, the per-address limits. Knows
        // nothing of orders or accounts: what runs on a socket is an endpoint the server gives it.
        .target(name: "WebSocketServer", dependencies: ["SocketServer", "WebSocketProtocol", "Forwarding"],
                swiftSettings: strict),
        // The application: its state and owners, the one door to durability (CommitLog), the
        // operations, the publishing of committed changes, and the sessions that admit requests.
        // Made from an `ApplicationStorage` (a journal and what it recovered); it imports no NATS
        // and never ends the process.
        .target(name: "BangbangApplication",
                dependencies: ["WebSocketServer", "SocketServer", "Forwarding", "WebSocketProtocol", "BangbangCore", "BangbangProtocol",
                               "Journal", "BangbangStorage", "OrderArchive", "InboxProtocol", "Crypto", "Platform"],
                swiftSettings: strict),
        // The application served on sockets: the routes and endpoints it gives WebSocketServer, the
        // web app's files, the settings table, start-up and shutdown.
        .target(name: "BangbangServer",
                dependencies: ["BangbangApplication", "WebSocketServer", "SocketServer", "Forwarding", "WebSocketProtocol", "BangbangCore",
                               "Crypto", "CLinux", "CZlib", "Platform", "NATSClient"],
                swiftSettings: strict),
        // What the owner of a partition does for the rest of the cluster: it answers the requests
        // other nodes route to it and their questions, and publishes the personal events and board
        // changes it numbers on the user and feed subjects.
        .target(name: "PartitionOwner",
                dependencies: ["BangbangApplication", "BangbangCore", "BangbangProtocol", "BangbangStorage", "Crypto",
                               "NATSClient", "Cluster", "InboxProtocol"],
                swiftSettings: strict),
        // Several nodes sharing the work over NATS JetStream: a node's lifecycle and leases, the
        // partitions' stream journals and inbox, relayed clients, sessions on any node, the owners'
        // answers to routed requests, and what spans the pairs of partitions.
        .target(name: "ScaleOut",
                dependencies: ["PartitionOwner", "BangbangServer", "BangbangApplication", "WebSocketServer", "SocketServer", "Forwarding", "WebSocketProtocol",
                               "BangbangCore", "BangbangProtocol", "BangbangStorage", "Journal", "OrderArchive", "Crypto", "Platform",
                               "NATSProtocol", "NATSClient", "Cluster", "RelayProtocol", "InboxProtocol", "JournalProtocol"],
                swiftSettings: strict),
        .target(name: "NATSProtocol", swiftSettings: strict),
        // The frames a gateway node and the partition's owner exchange about relayed WebSocket
        // connections; sans-I/O, no imports, fuzzed.
        .target(name: "RelayProtocol", swiftSettings: strict),
        // Personal events between partitions: the inbox message, the source's outbox and the
        // reader's rule; sans-I/O, no imports, fuzzed.
        .target(name: "InboxProtocol", swiftSettings: strict),
        // A partition journal's stream messages: batches of records with numbers of their own;
        // sans-I/O, no imports, fuzzed.
        .target(name: "JournalProtocol", swiftSettings: strict),
        // Closed orders in SQLite; stores each order's encoded bytes opaquely, so it imports no
        // Bangbang module.
        .target(name: "OrderArchive", dependencies: ["CSQLite"], swiftSettings: strict),
        .target(name: "NATSClient", dependencies: ["NATSProtocol", "SocketServer", "JSON", "Crypto"],
                swiftSettings: strict),
        // Where partitions live when several nodes share the work: who should own each (pure),
        // who does (leases in a KV bucket), and each partition's journal and snapshots.
        .target(name: "Cluster", dependencies: ["NATSClient", "JSON", "InboxProtocol", "JournalProtocol"], swiftSettings: strict),
        // What tests share: the seeded generator, the drip-feed verifier, `eventually`.
        .target(name: "TestSupport", path: "Tests/TestSupport", swiftSettings: strict),
        // The server's entry point, and `bangbang admin` (Admin/): the operator's command line,
        // online through BangbangClient, offline through the server's package-level surface.
        .executableTarget(name: "bangbang",
                          dependencies: ["ScaleOut", "PartitionOwner", "BangbangServer", "BangbangApplication", "BangbangClient", "BangbangProtocol", "Journal", "OrderArchive",
                                         "SocketServer", "Crypto", "Platform"],
                          swiftSettings: strict),
        .executableTarget(name: "loadtest", dependencies: ["WebSocketProtocol", "SocketServer", "BangbangProtocol", "Crypto"],
                          path: "loadtest", swiftSettings: strict),

        .testTarget(name: "PlatformTests", dependencies: ["TestSupport", "Platform"], swiftSettings: strict),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"], swiftSettings: strict),
        .testTarget(name: "WebSocketProtocolTests", dependencies: ["TestSupport", "WebSocketProtocol"], swiftSettings: strict),
        .testTarget(name: "ForwardingTests", dependencies: ["TestSupport", "Forwarding"], swiftSettings: strict),
        .testTarget(name: "WebSocketServerTests", dependencies: ["TestSupport", "WebSocketServer", "SocketServer", "WebSocketProtocol", "Forwarding"],
                    swiftSettings: strict),
        .testTarget(name: "SocketServerTests", dependencies: ["TestSupport", "SocketServer", "Forwarding", "Platform"], swiftSettings: strict),
        .testTarget(name: "BangbangCoreTests", dependencies: ["TestSupport", "BangbangCore"], swiftSettings: strict),
        .testTarget(name: "BangbangProtocolTests", dependencies: ["TestSupport", "BangbangProtocol"], swiftSettings: strict),
        .testTarget(name: "LoadtestTests", dependencies: ["loadtest", "BangbangProtocol"], swiftSettings: strict),
        .testTarget(name: "NATSProtocolTests", dependencies: ["TestSupport", "NATSProtocol"], swiftSettings: strict),
        .testTarget(name: "RelayProtocolTests", dependencies: ["TestSupport", "RelayProtocol"], swiftSettings: strict),
        .testTarget(name: "InboxProtocolTests", dependencies: ["TestSupport", "InboxProtocol"], swiftSettings: strict),
        // Real nats-server processes (one, or a 3-node cluster) for the integration tests.
        .target(name: "NATSTestSupport", dependencies: ["NATSClient", "TestSupport"], path: "Tests/NATSTestSupport", swiftSettings: strict),
        .testTarget(name: "NATSClientTests", dependencies: ["TestSupport", "NATSClient", "NATSProtocol", "JSON", "NATSTestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "ClusterTests", dependencies: ["Cluster", "InboxProtocol", "JournalProtocol", "NATSClient", "NATSTestSupport", "TestSupport"], swiftSettings: strict),
        // The server's side of a cluster (its stream journal, shared secret, owner directory)
        // against a real 3-node JetStream cluster.
        .testTarget(name: "ClusterServerTests",
                    dependencies: ["ScaleOut", "PartitionOwner", "BangbangServer", "BangbangApplication", "Cluster", "InboxProtocol", "JournalProtocol", "NATSClient", "NATSProtocol", "NATSTestSupport", "Journal",
                                   "TestSupport"],
                    swiftSettings: strict),
        .testTarget(name: "JournalTests", dependencies: ["TestSupport", "Journal", "Platform"], swiftSettings: strict),
        .testTarget(name: "OrderArchiveTests", dependencies: ["OrderArchive", "CSQLite"], swiftSettings: strict),
        .testTarget(name: "BangbangClientTests", dependencies: ["TestSupport", "BangbangClient", "BangbangProtocol", "SocketServer"],
                    swiftSettings: strict),
        // `bangbang admin`'s own code, in the executable: parsing, output, the online endpoint,
        // the backup manifest.
        .testTarget(name: "AdminCLITests", dependencies: ["TestSupport", "bangbang", "BangbangServer", "BangbangApplication", "BangbangProtocol"],
                    swiftSettings: strict),
        // Also the executable, for the backup and restore of a live application (its harness
        // is here).
        .testTarget(name: "BangbangServerTests",
                    dependencies: ["TestSupport", "ScaleOut", "PartitionOwner", "BangbangServer", "BangbangApplication", "Cluster", "WebSocketServer", "BangbangStorage", "OrderArchive", "WebSocketProtocol",
                                   "SocketServer", "Forwarding", "CZlib", "NATSClient", "NATSTestSupport", "RelayProtocol",
                                   "bangbang"],
                    exclude: ["Fixtures"],
                    swiftSettings: strict),
    ]
)
