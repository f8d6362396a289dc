// Builds a `ServerConfiguration` from, lowest precedence first: the defaults, an optional config
// file (`--config PATH` or BANGBANG_CONFIG), environment variables (BANGBANG_PORT…), and flags.
// List settings (campus, admin-phone) are replaced, not merged, by a higher source, so an
// operator can always tell which source a value came from.
import BangbangApplication
import Foundation

public enum Command: Sendable, Equatable {
    case serve
    case checkConfig
    case help
    case version
}

public struct LoadedConfiguration: Sendable {
    public var command: Command
    public var configuration: ServerConfiguration
}

public enum ConfigurationLoader {
    public static func load(arguments: [String], environment: [String: String],
                            readFile: (String) throws -> String = { try String(contentsOfFile: $0, encoding: .utf8) })
        throws(ConfigurationError) -> LoadedConfiguration {
        var command = Command.serve
        var remaining = arguments[...]
        if let first = remaining.first, !first.hasPrefix("-") {
            switch first {
            case "serve": command = .serve
            case "check-config": command = .checkConfig
            case "help": command = .help
            case "version": command = .version
            default: throw ConfigurationError("unknown command '\(first)'; commands: serve, check-config, help, version")
            }
            remaining = remaining.dropFirst()
        }

        // Flags are parsed first (to find --config and to fail fast on typos) but applied last.
        var flagValues: [(Setting, String)] = []
        var configPath = environment["BANGBANG_CONFIG"]
        while let argument = remaining.popFirst() {
            if argument == "--help" || argument == "-h" { return LoadedConfiguration(command: .help, configuration: .init()) }
            if argument == "--version" { return LoadedConfiguration(command: .version, configuration: .init()) }
            guard argument.hasPrefix("--") else { throw ConfigurationError("unexpected argument '\(argument)'") }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if name == "config" {
                guard let path = inlineValue ?? remaining.popFirst() else { throw ConfigurationError("--config needs a PATH") }
                configPath = path
                continue
            }
            guard let setting = SettingsTable.named(name) else {
                throw ConfigurationError("unknown option '--\(name)'; see --help")
            }
            if setting.kind == .flag {
                flagValues.append((setting, inlineValue ?? "true"))
            } else {
                guard let value = inlineValue ?? remaining.popFirst() else {
                    throw ConfigurationError("--\(name) needs a value (\(setting.placeholder))")
                }
                flagValues.append((setting, value))
            }
        }

        var configuration = ServerConfiguration()
        if let configPath {
            let text: String
            do { text = try readFile(configPath) } catch {
                throw ConfigurationError("cannot read config file '\(configPath)': \(error.localizedDescription)")
            }
            try apply(fileEntries: try parseFile(text, path: configPath), to: &configuration)
        }
        try apply(sourced: SettingsTable.all.compactMap { setting in
            environment[setting.environmentVariable].map { (setting, $0, setting.environmentVariable) }
        }, to: &configuration)
        try apply(sourced: flagValues.map { ($0.0, $0.1, "--\($0.0.name)") }, to: &configuration)
        try validate(configuration)
        return LoadedConfiguration(command: command, configuration: configuration)
    }

    /// `key = value` lines; `#` starts a comment; keys are the flag names without dashes.
    static func parseFile(_ text: String, path: String) throws(ConfigurationError) -> [(Setting, String, String)] {
        var entries: [(Setting, String, String)] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let location = "\(path):\(index + 1)"
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw ConfigurationError("\(location): expected 'key = value'")
            }
            let key = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
            var value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            guard let setting = SettingsTable.named(key) else { throw ConfigurationError("\(location): unknown setting '\(key)'") }
            entries.append((setting, value, location))
        }
        return entries
    }

    private static func apply(fileEntries: [(Setting, String, String)], to configuration: inout ServerConfiguration)
        throws(ConfigurationError) {
        try apply(sourced: fileEntries, to: &configuration)
    }

    /// Applies one source; a list setting given in this source replaces the lower sources' list.
    private static func apply(sourced entries: [(Setting, String, String)], to configuration: inout ServerConfiguration)
        throws(ConfigurationError) {
        var clearedLists: Set<String> = []
        for (setting, value, source) in entries {
            if setting.kind == .list, clearedLists.insert(setting.name).inserted {
                if setting.name == "campus" { configuration.campuses = [] }
                if setting.name == "admin-phone" { configuration.adminPhones = [] }
                if setting.name == "allowed-origin" { configuration.allowedOrigins = [] }
                if setting.name == "trusted-proxy" { configuration.trustedProxies = [] }
            }
            let values = setting.kind == .list && source.hasPrefix("BANGBANG_")
                ? value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                : [value]
            for item in values {
                do throws(ConfigurationError) { try setting.apply(&configuration, item) } catch {
                    throw ConfigurationError(source.hasPrefix("--") ? error.message : "\(source): \(error.message)")
                }
            }
        }
    }

    static func validate(_ configuration: ServerConfiguration) throws(ConfigurationError) {
        if (configuration.tlsCertificatePath == nil) != (configuration.tlsKeyPath == nil) {
            throw ConfigurationError("--tls-cert and --tls-key must be given together")
        }
        if configuration.isPartitioned, !configuration.isClustered {
            throw ConfigurationError("--partitions above 1 splits a cluster's partitions over its nodes: it needs --nats")
        }
        if configuration.expectsProxyProtocol, configuration.trustedProxies.isEmpty {
            throw ConfigurationError("--proxy-protocol needs at least one --trusted-proxy: the header is read from trusted proxies only")
        }
    }

    public static func helpText() -> String {
        var lines = [
            "usage: bangbang [serve | check-config | version | help] [options]",
            "       bangbang admin COMMAND [options]   (see bangbang admin --help)",
            "",
            "Bangbang, a real-time dispatch server for campus errand apps.",
            "Precedence: flags > environment (BANGBANG_…) > config file (--config PATH) > defaults.",
            "",
            "options:",
            "  --config PATH                 read settings from a 'key = value' file (env BANGBANG_CONFIG)",
        ]
        let defaults = ServerConfiguration()
        for setting in SettingsTable.all {
            let left = setting.kind == .flag ? "--\(setting.name)" : "--\(setting.name) \(setting.placeholder)"
            let current = setting.current(defaults)
            let suffix = current.isEmpty ? "" : " (default: \(current))"
            // padding(toLength:) also truncates: long names get a single space instead.
            let column = left.count < 30 ? left.padding(toLength: 30, withPad: " ", startingAt: 0) : left + " "
            lines.append("  " + column + setting.help + suffix)
            lines.append(String(repeating: " ", count: 32) + "env \(setting.environmentVariable)")
        }
        lines.append("  --help, --version")
        return lines.joined(separator: "\n")
    }
}
