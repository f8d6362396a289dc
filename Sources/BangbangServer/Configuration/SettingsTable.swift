// The one table of settings: name, help text and how to read a value. `--help`, the environment
// variables (`BANGBANG_` + upper-cased name), the config file keys and `check-config` all come
// from it, so a setting cannot exist in one place and be missing from another.

struct Setting: Sendable {
    enum Kind: Sendable { case flag, value, list }
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

public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
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

private func nonEmpty(_ name: String, _ text: String) throws(ConfigurationError) -> String {
    guard !text.isEmpty else { throw ConfigurationError("invalid value for \(name): must not be empty") }
    return text
}

enum SettingsTable {
    static let all: [Setting] = [
        Setting(name: "host", kind: .value, placeholder: "ADDRESS",
                help: "address to listen on (IPv4 or IPv6)",
                apply: { config, text throws(ConfigurationError) in config.host = try nonEmpty("--host", text) },
                current: { $0.host }),
        Setting(name: "port", kind: .value, placeholder: "PORT", help: "TCP port (0 picks a free one)",
                apply: { config, text throws(ConfigurationError) in config.port = try integer("--port", text, in: 0...65535) },
                current: { String($0.port) }),
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
        Setting(name: "max-connections-per-address", kind: .value, placeholder: "N",
                help: "open connections allowed from one client address",
                apply: { config, text throws(ConfigurationError) in
                    config.maxConnectionsPerAddress = try integer("--max-connections-per-address", text, in: 1...10_000_000) },
                current: { String($0.maxConnectionsPerAddress) }),
        Setting(name: "sms-per-ip-hourly", kind: .value, placeholder: "N",
                help: "SMS codes one client IP may request per hour (0: unlimited)",
                apply: { config, text throws(ConfigurationError) in
                    config.smsPerIPHourly = try integer("--sms-per-ip-hourly", text, in: 0...1_000_000) },
                current: { String($0.smsPerIPHourly) }),
        Setting(name: "event-loops", kind: .value, placeholder: "N", help: "connection event loops (0: one per core)",
                apply: { config, text throws(ConfigurationError) in config.eventLoops = try integer("--event-loops", text, in: 0...64) },
                current: { String($0.eventLoops) }),
        Setting(name: "fsync", kind: .value, placeholder: "POLICY",
                help: "journal durability: always | interval:MS | never",
                apply: { config, text throws(ConfigurationError) in config.fsyncPolicy = try parseFsyncPolicy(text) },
                current: { describe($0.fsyncPolicy) }),
        Setting(name: "snapshot-interval", kind: .value, placeholder: "SECONDS", help: "seconds between snapshots",
                apply: { config, text throws(ConfigurationError) in
                    config.snapshotIntervalSeconds = try integer("--snapshot-interval", text, in: 1...86_400) },
                current: { String($0.snapshotIntervalSeconds) }),
        Setting(name: "snapshot-bytes", kind: .value, placeholder: "BYTES", help: "journal growth that triggers a snapshot",
                apply: { config, text throws(ConfigurationError) in
                    config.snapshotJournalBytes = try integer("--snapshot-bytes", text, in: 4096...(1 << 40)) },
                current: { String($0.snapshotJournalBytes) }),
        Setting(name: "shards-per-type", kind: .value, placeholder: "N", help: "board shards per order type",
                apply: { config, text throws(ConfigurationError) in
                    config.shardsPerType = try integer("--shards-per-type", text, in: 1...32) },
                current: { String($0.shardsPerType) }),
        Setting(name: "max-connections", kind: .value, placeholder: "N", help: "maximum open connections",
                apply: { config, text throws(ConfigurationError) in
                    config.maxConnections = try integer("--max-connections", text, in: 1...10_000_000) },
                current: { String($0.maxConnections) }),
        Setting(name: "max-message-bytes", kind: .value, placeholder: "BYTES", help: "largest message on /ws",
                apply: { config, text throws(ConfigurationError) in
                    config.maxMessageBytes = try integer("--max-message-bytes", text, in: 1024...(16 << 20)) },
                current: { String($0.maxMessageBytes) }),
        Setting(name: "max-output-bytes", kind: .value, placeholder: "BYTES",
                help: "output queued per client before it is closed as a slow consumer",
                apply: { config, text throws(ConfigurationError) in
                    config.maxOutputBytes = try integer("--max-output-bytes", text, in: 65536...(1 << 30)) },
                current: { String($0.maxOutputBytes) }),
        Setting(name: "handshake-timeout", kind: .value, placeholder: "SECONDS", help: "time allowed for the opening handshake",
                apply: { config, text throws(ConfigurationError) in
                    config.handshakeTimeoutSeconds = try integer("--handshake-timeout", text, in: 1...300) },
                current: { String($0.handshakeTimeoutSeconds) }),
        Setting(name: "ping-interval", kind: .value, placeholder: "SECONDS", help: "idle time before the server pings",
                apply: { config, text throws(ConfigurationError) in
                    config.pingIntervalSeconds = try integer("--ping-interval", text, in: 1...3600) },
                current: { String($0.pingIntervalSeconds) }),
        Setting(name: "log-level", kind: .value, placeholder: "LEVEL", help: "debug | info | warning | error",
                apply: { config, text throws(ConfigurationError) in
                    guard ["debug", "info", "warning", "error"].contains(text) else {
                        throw ConfigurationError("invalid value '\(text)' for --log-level: expected debug, info, warning or error")
                    }
                    config.logLevel = text },
                current: { $0.logLevel }),
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
