// The one table of settings: name, help text and how to read a value. `--help`, the environment
// variables (`BANGBANG_` + upper-cased name), the config file keys and `check-config` all come
// from it, so a setting cannot exist in one place and be missing from another.
import BangbangApplication
import BangbangCore
import Forwarding
import NATSClient

package struct Setting: Sendable {
    package enum Kind: Sendable { case flag, value, list }
    let name: String
    let kind: Kind
    let placeholder: String
    let help: String
    let apply: @Sendable (inout ServerConfiguration, String) throws(ConfigurationError) -> Void
    let current: @Sendable (ServerConfiguration) -> String

    var environmentVariable: String {
        "BANGBANG_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
    }
}

private func integer(_ name: String, _ text: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
    guard let value = Int(text), range.contains(value) else {
        throw ConfigurationError("invalid value '\(text)' for \(name): expected an integer in \(range.lowerBound)...\(range.upperBound)")
    }
    return value
}

private func boolean(_ name: String, _ text: String) throws(ConfigurationError) -> Bool {
    switch text.lowercased() {
    case "1", "true", "yes", "on": return true
    case "0", "false", "no", "off": return false
    default: throw ConfigurationError("invalid value '\(text)' for \(name): expected true or false")
    }
}

private func addressRange(_ text: String) throws(ConfigurationError) -> AddressRange {
    do throws(AddressRange.ParseError) { return try AddressRange(parsing: text) } catch {
        throw ConfigurationError("invalid value '\(text)' for --trusted-proxy: \(error)")
    }
}

private func nonEmpty(_ name: String, _ text: String) throws(ConfigurationError) -> String {
    guard !text.isEmpty else { throw ConfigurationError("invalid value for \(name): must not be empty") }
    return text
}

private func natsAddress(_ text: String) throws(ConfigurationError) -> String {
    guard let address = NATSServerAddress(url: text) else {
        throw ConfigurationError("invalid value '\(text)' for --nats: expected nats://host:port")
    }
    return address.description
}

/// Node names appear in NATS subjects and lease records, so only characters safe in both.
private func nodeName(_ text: String) throws(ConfigurationError) -> String {
    let allowed = text.utf8.allSatisfy { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x5F
    }
    guard !text.isEmpty, text.utf8.count <= 64, allowed else {
        throw ConfigurationError("invalid value '\(text)' for --node-id: expected 1 to 64 letters, digits, '-' or '_'")
    }
    return text
}

extension Setting {
    /// A setting whose value is an integer in `range`, kept in `field`; bad values are refused
    /// with a message naming the flag and the range.
    static func integerValued(_ name: String, placeholder: String, help: String, range: ClosedRange<Int>,
                              _ field: WritableKeyPath<ServerConfiguration, Int> & Sendable) -> Setting {
        Setting(name: name, kind: .value, placeholder: placeholder, help: help,
                apply: { config, text throws(ConfigurationError) in
                    config[keyPath: field] = try integer("--\(name)", text, in: range) },
                current: { String($0[keyPath: field]) })
    }
}

package enum SettingsTable {
    package static let all: [Setting] = [
        Setting(name: "host", kind: .value, placeholder: "ADDRESS",
                help: "address to listen on (IPv4 or IPv6)",
                apply: { config, text throws(ConfigurationError) in config.host = try nonEmpty("--host", text) },
                current: { $0.host }),
        .integerValued("port", placeholder: "PORT", help: "TCP port (0 picks a free one)",
                       range: 0...65535, \.port),
        Setting(name: "data-dir", kind: .value, placeholder: "PATH", help: "directory for the journal and snapshots",
                apply: { config, text throws(ConfigurationError) in config.dataDirectory = try nonEmpty("--data-dir", text) },
                current: { $0.dataDirectory }),
        Setting(name: "echo", kind: .flag, placeholder: "", help: "serve the /echo WebSocket endpoint",
                apply: { config, text throws(ConfigurationError) in config.enablesEcho = try boolean("--echo", text) },
                current: { String($0.enablesEcho) }),
        Setting(name: "tls-cert", kind: .value, placeholder: "PEM", help: "TLS certificate chain (enables wss://)",
                apply: { config, text throws(ConfigurationError) in config.tlsCertificatePath = try nonEmpty("--tls-cert", text) },
                current: { $0.tlsCertificatePath ?? "" }),
        Setting(name: "tls-key", kind: .value, placeholder: "PEM", help: "TLS private key",
                apply: { config, text throws(ConfigurationError) in config.tlsKeyPath = try nonEmpty("--tls-key", text) },
                current: { $0.tlsKeyPath ?? "" }),
        Setting(name: "dev", kind: .flag, placeholder: "",
                help: "development mode: SMS codes are returned in replies (never in production)",
                apply: { config, text throws(ConfigurationError) in config.isDevelopment = try boolean("--dev", text) },
                current: { String($0.isDevelopment) }),
        Setting(name: "sms-command", kind: .value, placeholder: "COMMAND",
                help: "shell command that sends an SMS code, given BANGBANG_SMS_PHONE, BANGBANG_SMS_CODE and BANGBANG_SMS_PURPOSE (default: codes are logged)",
                apply: { config, text throws(ConfigurationError) in config.smsCommand = try nonEmpty("--sms-command", text) },
                current: { $0.smsCommand ?? "" }),
        Setting(name: "admin-phone", kind: .list, placeholder: "PHONE", help: "administrator phone (repeatable)",
                apply: { config, text throws(ConfigurationError) in config.adminPhones.append(try nonEmpty("--admin-phone", text)) },
                current: { $0.adminPhones.joined(separator: ",") }),
        Setting(name: "support-phone", kind: .value, placeholder: "PHONE", help: "support phone shown in the app",
                apply: { config, text throws(ConfigurationError) in config.supportPhone = try nonEmpty("--support-phone", text) },
                current: { $0.supportPhone ?? "" }),
        Setting(name: "campus", kind: .list, placeholder: "NAME", help: "a campus this deployment serves (repeatable)",
                apply: { config, text throws(ConfigurationError) in config.campuses.append(try nonEmpty("--campus", text)) },
                current: { $0.campuses.joined(separator: ",") }),
        Setting(name: "allowed-origin", kind: .list, placeholder: "ORIGIN",
                help: "browser Origin allowed to connect (repeatable; none given: any)",
                apply: { config, text throws(ConfigurationError) in config.allowedOrigins.append(try nonEmpty("--allowed-origin", text)) },
                current: { $0.allowedOrigins.joined(separator: ",") }),
        Setting(name: "web-dir", kind: .value, placeholder: "DIR",
                help: "serve the web app from DIR (default: the web/ folder found beside the binary)",
                apply: { config, text throws(ConfigurationError) in config.webDirectory = try nonEmpty("--web-dir", text) },
                current: { $0.webDirectory ?? "" }),
        Setting(name: "no-web", kind: .flag, placeholder: "", help: "do not serve the web app and console",
                apply: { config, text throws(ConfigurationError) in config.servesWeb = !(try boolean("--no-web", text)) },
                current: { String(!$0.servesWeb) }),
        .integerValued("max-connections-per-address", placeholder: "N", help: "open connections allowed from one client address",
                       range: 1...10_000_000, \.maxConnectionsPerAddress),
        .integerValued("sms-per-ip-hourly", placeholder: "N", help: "SMS codes one client IP may request per hour (0: unlimited)",
                       range: 0...1_000_000, \.smsPerIPHourly),
        .integerValued("sms-resend-seconds", placeholder: "S", help: "the wait before a phone may be sent another code",
                       range: 0...3_600, \.smsResendSeconds),
        .integerValued("event-loops", placeholder: "N", help: "connection event loops (0: one per core)",
                       range: 0...64, \.eventLoops),
        Setting(name: "fsync", kind: .value, placeholder: "POLICY",
                help: "journal durability: always | interval:MS | never",
                apply: { config, text throws(ConfigurationError) in config.fsyncPolicy = try parseFsyncPolicy(text) },
                current: { describe($0.fsyncPolicy) }),
        .integerValued("snapshot-interval", placeholder: "SECONDS", help: "seconds between snapshots",
                       range: 1...86_400, \.snapshotIntervalSeconds),
        .integerValued("snapshot-bytes", placeholder: "BYTES", help: "journal growth that triggers a snapshot",
                       range: 4096...(1 << 40), \.snapshotJournalBytes),
        .integerValued("shards-per-type", placeholder: "N", help: "board shards per order type",
                       range: 1...32, \.shardsPerType),
        .integerValued("max-connections", placeholder: "N", help: "maximum open connections",
                       range: 1...10_000_000, \.maxConnections),
        .integerValued("max-message-bytes", placeholder: "BYTES", help: "largest message on /ws",
                       range: 1024...(16 << 20), \.maxMessageBytes),
        .integerValued("max-output-bytes", placeholder: "BYTES", help: "output queued per client before it is closed as a slow consumer",
                       range: 65536...(1 << 30), \.maxOutputBytes),
        .integerValued("stream-events", placeholder: "N", help: "personal events kept per user for auth.resume (older: resync)",
                       range: 1...100_000, \.streamEvents),
        .integerValued("stream-bytes", placeholder: "BYTES", help: "bytes of personal events kept per user for auth.resume",
                       range: 1024...(64 << 20), \.streamBytes),
        .integerValued("handshake-timeout", placeholder: "SECONDS", help: "time allowed for the opening handshake",
                       range: 1...300, \.handshakeTimeoutSeconds),
        .integerValued("ping-interval", placeholder: "SECONDS", help: "idle time before the server pings",
                       range: 1...3600, \.pingIntervalSeconds),
        Setting(name: "log-level", kind: .value, placeholder: "LEVEL", help: "debug | info | warning | error",
                apply: { config, text throws(ConfigurationError) in
                    guard ["debug", "info", "warning", "error"].contains(text) else {
                        throw ConfigurationError("invalid value '\(text)' for --log-level: expected debug, info, warning or error")
                    }
                    config.logLevel = text },
                current: { $0.logLevel }),
        .integerValued("requests-per-second", placeholder: "N",
                       help: "requests per second per connection, bursts of 2N (0: unlimited)",
                       range: 0...1_000_000, \.requestsPerSecond),
        .integerValued("user-requests-per-second", placeholder: "N",
                       help: "requests per second per user across connections, bursts of 2N (0: unlimited)",
                       range: 0...1_000_000, \.userRequestsPerSecond),
        .integerValued("handshakes-per-second-per-address", placeholder: "N",
                       help: "WebSocket handshakes per second per client address, bursts of 2N (0: unlimited)",
                       range: 0...1_000_000, \.handshakesPerSecondPerAddress),
        .integerValued("cancel-grace-seconds", placeholder: "SECONDS",
                       help: "after acceptance, seconds in which a publisher cancels free (up to a day)",
                       range: 0...86_400, \.cancelGraceSeconds),
        .integerValued("cancel-fee", placeholder: "FEN",
                       help: "fee in fen paid to the runner for a cancellation after the grace window (up to ¥500)",
                       range: 0...Int(OrderRules().maximumTip), \.cancelFee),
        .integerValued("auto-confirm-hours", placeholder: "HOURS",
                       help: "hours after delivery before an unconfirmed order completes by itself (up to 30 days)",
                       range: 1...720, \.autoConfirmHours),
        .integerValued("rating-window-days", placeholder: "DAYS",
                       help: "days after an order closed in which it can be rated; then it moves to the archive (0: at once, no ratings; up to a year)",
                       range: 0...366, \.ratingWindowDays),
        Setting(name: "trusted-proxy", kind: .list, placeholder: "CIDR",
                help: "a proxy whose PROXY header or Forwarded/X-Forwarded-For names the client (repeatable; none: trust no one)",
                apply: { config, text throws(ConfigurationError) in config.trustedProxies.append(try addressRange(text)) },
                current: { $0.trustedProxies.map(\.description).joined(separator: ",") }),
        Setting(name: "proxy-protocol", kind: .flag, placeholder: "",
                help: "every connection starts with a PROXY protocol v1/v2 header from a --trusted-proxy",
                apply: { config, text throws(ConfigurationError) in config.expectsProxyProtocol = try boolean("--proxy-protocol", text) },
                current: { String($0.expectsProxyProtocol) }),
        Setting(name: "nats", kind: .list, placeholder: "URL",
                help: "a NATS server of the cluster, nats://host:port (repeatable; none: a single node, no NATS)",
                apply: { config, text throws(ConfigurationError) in config.natsServers.append(try natsAddress(text)) },
                current: { $0.natsServers.joined(separator: ",") }),
        Setting(name: "node-id", kind: .value, placeholder: "NAME",
                help: "this node's name in the cluster (letters, digits, - and _; default: the host name)",
                apply: { config, text throws(ConfigurationError) in config.nodeID = try nodeName(text) },
                current: { $0.nodeID }),
        .integerValued("lease-ms", placeholder: "MS",
                       help: "milliseconds a node's partition lease lasts unrenewed before another node takes it",
                       range: 1_000...60_000, \.leaseMilliseconds),
        .integerValued("move-back-ms", placeholder: "MS",
                       help: "milliseconds a rejoined node stays live before the partition moves back to it (its preferred owner; at least --lease-ms); 0: never",
                       range: 0...3_600_000, \.moveBackMilliseconds),
        Setting(name: "cluster-sessions", kind: .value, placeholder: "relay|node",
                help: "where a node that does not own the partition runs its clients' sessions: relay (to the owner) or node (here, requests routed over NATS)",
                apply: { config, text throws(ConfigurationError) in
                    guard let mode = ClusterSessions(rawValue: text) else {
                        throw ConfigurationError("invalid value '\(text)' for --cluster-sessions: expected relay or node")
                    }
                    config.clusterSessions = mode
                },
                current: { $0.clusterSessions.rawValue }),
        .integerValued("partitions", placeholder: "N",
                       help: "pairs of partitions the cluster's campuses and accounts are split into, the same on every node; above 1, each node owns some and runs its clients' sessions itself",
                       range: 1...64, \.partitions),
    ]

    static func named(_ name: String) -> Setting? { all.first { $0.name == name } }

    static func parseFsyncPolicy(_ text: String) throws(ConfigurationError) -> FsyncPolicy {
        switch text {
        case "always": return .always
        case "never": return .never
        default:
            if text.hasPrefix("interval:"), let ms = Int(text.dropFirst("interval:".count)), (1...60_000).contains(ms) {
                return .interval(milliseconds: ms)
            }
            throw ConfigurationError("invalid value '\(text)' for --fsync: expected always, interval:MS (1...60000) or never")
        }
    }

    static func describe(_ policy: FsyncPolicy) -> String {
        switch policy {
        case .always: "always"
        case .never: "never"
        case .interval(let ms): "interval:\(ms)"
        }
    }
}
