// swift-tools-version:6.0
// Bangbang: a real-time dispatch server for campus errand apps.
// Imports point one way, downward:
//   bangbang → BangbangServer → {SocketServer, WebSocketProtocol, BangbangProtocol → BangbangCore, Journal}
//            → Crypto → C shims (CZlib, COpenSSL; CLinux for SocketServer and the server)
//   NATSClient (JetStream, KV, object store; not yet used by the server)
//            → {NATSProtocol (sans-I/O, no imports), SocketServer, BangbangProtocol (its JSON), Crypto}
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Bangbang",
    products: [
        .executable(name: "bangbang", targets: ["bangbang"]),
        .executable(name: "loadtest", targets: ["loadtest"]),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .target(name: "Crypto", dependencies: ["COpenSSL", "CZlib"], swiftSettings: strict),
        .target(name: "WebSocketProtocol", dependencies: ["Crypto", "CZlib"], swiftSettings: strict),
        .target(name: "SocketServer", dependencies: ["COpenSSL", "CLinux"], swiftSettings: strict),
        .target(name: "BangbangCore", dependencies: ["Crypto"], swiftSettings: strict),
        .target(name: "Journal", dependencies: ["Crypto", "CZlib"], swiftSettings: strict),
        .target(name: "BangbangProtocol", dependencies: ["BangbangCore"], swiftSettings: strict),
        .target(name: "BangbangServer",
                dependencies: ["SocketServer", "WebSocketProtocol", "BangbangCore", "BangbangProtocol", "Journal", "Crypto", "CLinux", "CZlib"],
                swiftSettings: strict),
        .target(name: "NATSProtocol", swiftSettings: strict),
        .target(name: "NATSClient", dependencies: ["NATSProtocol", "SocketServer", "BangbangProtocol", "Crypto"],
                swiftSettings: strict),
        .executableTarget(name: "bangbang", dependencies: ["BangbangServer"], swiftSettings: strict),
        .executableTarget(name: "loadtest", dependencies: ["WebSocketProtocol", "SocketServer", "BangbangProtocol", "Crypto"],
                          path: "loadtest", swiftSettings: strict),

        .testTarget(name: "CryptoTests", dependencies: ["Crypto"], swiftSettings: strict),
        .testTarget(name: "WebSocketProtocolTests", dependencies: ["WebSocketProtocol"], swiftSettings: strict),
        .testTarget(name: "SocketServerTests", dependencies: ["SocketServer"], swiftSettings: strict),
        .testTarget(name: "BangbangCoreTests", dependencies: ["BangbangCore"], swiftSettings: strict),
        .testTarget(name: "BangbangProtocolTests", dependencies: ["BangbangProtocol"], swiftSettings: strict),
        .testTarget(name: "LoadtestTests", dependencies: ["loadtest", "BangbangProtocol"], swiftSettings: strict),
        .testTarget(name: "NATSProtocolTests", dependencies: ["NATSProtocol"], swiftSettings: strict),
        .testTarget(name: "NATSClientTests", dependencies: ["NATSClient", "NATSProtocol", "BangbangProtocol"],
                    swiftSettings: strict),
        .testTarget(name: "JournalTests", dependencies: ["Journal"], swiftSettings: strict),
        .testTarget(name: "BangbangServerTests",
                    dependencies: ["BangbangServer", "WebSocketProtocol", "SocketServer", "CZlib"],
                    swiftSettings: strict),
    ]
)
