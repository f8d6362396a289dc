// The command line, parsed by hand: one table of flags (which also writes `--help`), one pass
// over the arguments, and an error that names the offending flag.
import Foundation


struct ArgumentError: Error, Equatable, CustomStringConvertible {
    var message: String
    var description: String { message }
}

enum ArgumentParser {
    struct Flag {
        var name: String
        /// nil for a switch that takes no value.
        var valueName: String?
        var help: String
        /// Scenarios the flag applies to; empty means all.
        var scenarios: Set<Scenario> = []
        /// Set by the parent of a multi-process run, not by people.
        var isInternal = false
        /// May be given more than once, each adding a value.
        var isRepeatable = false
    }

    static let flags: [Flag] = [
        Flag(name: "--url", valueName: "URL", help: "ws:// or wss:// address of the server (required)"),
        Flag(name: "--runner-url", valueName: "URL",
             help: "connect runners to this address instead of --url; repeat it to spread them over the nodes of a cluster in turn",
             scenarios: [.feed], isRepeatable: true),
        Flag(name: "--duration", valueName: "SECONDS", help: "length of the measured phase (default 10)"),
        Flag(name: "--connections", valueName: "N",
             help: "connections (default 1 for echo, 1000 for connections)", scenarios: [.echo, .connections]),
        Flag(name: "--window", valueName: "W", help: "messages in flight per connection (default 16)", scenarios: [.echo]),
        Flag(name: "--message-size", valueName: "BYTES", help: "echo payload size (default 100)", scenarios: [.echo]),
        Flag(name: "--compress", help: "offer permessage-deflate"),
        Flag(name: "--login", help: "log every connection in (needs a --dev server)", scenarios: [.connections]),
        Flag(name: "--server-pid", valueName: "PID", help: "read the server's RSS from /proc/PID/status"),
        Flag(name: "--runners", valueName: "N", help: "runners (default 100)", scenarios: [.feed, .race, .errand]),
        Flag(name: "--publishers", valueName: "N", help: "publishers (default 1; 10 for errand, 100 for durable)",
             scenarios: [.feed, .errand, .durable]),
        Flag(name: "--rate", valueName: "PER_SECOND", help: "total publishes per second (default 10)",
             scenarios: [.feed, .errand]),
        Flag(name: "--types", valueName: "LIST", help: "comma-separated order types (default: all four for errand, express otherwise)",
             scenarios: [.feed, .errand, .durable, .race]),
        Flag(name: "--campuses", valueName: "LIST", help: "comma-separated campuses publishers take in turn (default North)",
             scenarios: [.durable]),
        Flag(name: "--orders", valueName: "M", help: "orders to race for (default 10)", scenarios: [.race]),
        Flag(name: "--admin-phone", valueName: "PHONE", help: "administrator phone the server was started with",
             scenarios: [.feed, .race, .errand]),
        Flag(name: "--sources", valueName: "N", help: "spread connections over 127.0.0.2 … 127.0.0.(N+1) (default: one per 1,000 connections on loopback, the server's per-address cap)"),
        Flag(name: "--processes", valueName: "N", help: "split the work over N driver processes (default 1)"),
        Flag(name: "--threads", valueName: "N", help: "event loops per process (default: one per core)"),
        Flag(name: "--connect-concurrency", valueName: "N", help: "handshakes in flight while connecting (default 256)"),
        Flag(name: "--verify-tls", help: "check the server's certificate against the system trust store"),
        Flag(name: "--json", valueName: "FILE", help: "write the results as JSON (for compare)"),
        Flag(name: "--plot", valueName: "FILE", help: "draw the latency distribution and throughput over time as SVG"),
        Flag(name: "--quiet", help: "no progress line"),
        Flag(name: "--process-index", valueName: "I", help: "", isInternal: true),
        Flag(name: "--process-count", valueName: "N", help: "", isInternal: true),
    ]

    static func parse(_ arguments: [String], cores: Int) throws(ArgumentError) -> Command {
        guard let first = arguments.first else { throw ArgumentError(message: "no scenario given; try --help") }
        if first == "--help" || first == "-h" || first == "help" {
            if arguments.count > 1, let scenario = Scenario(rawValue: arguments[1]) { return .help(scenario) }
            return .help(nil)
        }
        if first == "compare" {
            guard arguments.count == 3 else { throw ArgumentError(message: "usage: loadtest compare A.json B.json") }
            return .compare(first: arguments[1], second: arguments[2])
        }
        guard let scenario = Scenario(rawValue: first) else {
            throw ArgumentError(message: "unknown scenario '\(first)'; expected one of: "
                                + Scenario.allCases.map(\.rawValue).joined(separator: ", ") + ", compare")
        }
        if arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) { return .help(scenario) }

        var url: TargetURL?
        var options = Options(scenario: scenario, url: TargetURL(isSecure: false, host: "127.0.0.1", port: 8080, path: "/ws"),
                              threads: max(1, cores))
        var seen: Set<String> = []
        var index = 1
        while index < arguments.count {
            var name = arguments[index]
            var inlineValue: String?
            if let equals = name.firstIndex(of: "="), name.hasPrefix("--") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let flag = flags.first(where: { $0.name == name }) else {
                throw ArgumentError(message: name.hasPrefix("-") ? "unknown flag \(name); try --help"
                                                                  : "unexpected argument '\(name)'; flags start with --")
            }
            guard flag.scenarios.isEmpty || flag.scenarios.contains(scenario) else {
                throw ArgumentError(message: "\(name) does not apply to the \(scenario.rawValue) scenario")
            }
            guard seen.insert(name).inserted || flag.isRepeatable else { throw ArgumentError(message: "\(name) given twice") }
            var value = ""
            if flag.valueName != nil {
                if let inlineValue {
                    value = inlineValue
                } else {
                    guard index + 1 < arguments.count else { throw ArgumentError(message: "\(name) needs a value") }
                    index += 1
                    value = arguments[index]
                }
            } else if inlineValue != nil {
                throw ArgumentError(message: "\(name) takes no value")
            }
            index += 1

            switch name {
            case "--url":
                do { url = try TargetURL(parsing: value) } catch {
                    guard case .invalid(let why) = error else { fatalError("internal inconsistency in URL parsing") }
                    throw ArgumentError(message: "--url: \(why)")
                }
            case "--runner-url":
                do { options.runnerURLs.append(try TargetURL(parsing: value)) } catch {
                    guard case .invalid(let why) = error else { fatalError("internal inconsistency in URL parsing") }
                    throw ArgumentError(message: "--runner-url: \(why)")
                }
            case "--duration": options.durationSeconds = try positiveNumber(value, flag: name)
            case "--connections": options.connections = try integer(value, flag: name, minimum: 1)
            case "--window": options.window = try integer(value, flag: name, minimum: 1, maximum: 4096)
            case "--message-size": options.messageSize = try integer(value, flag: name, minimum: 1, maximum: 1 << 20)
            case "--compress": options.compress = true
            case "--login": options.login = true
            case "--server-pid": options.serverPID = Int32(try integer(value, flag: name, minimum: 1, maximum: Int(Int32.max)))
            case "--runners": options.runners = try integer(value, flag: name, minimum: 1)
            case "--publishers": options.publishers = try integer(value, flag: name, minimum: 1)
            case "--rate": options.rate = try positiveNumber(value, flag: name)
            case "--types":
                let types = value.split(separator: ",").map { String($0) }
                guard !types.isEmpty, types.allSatisfy({ !$0.isEmpty }) else {
                    throw ArgumentError(message: "--types: expected a comma-separated list, got '\(value)'")
                }
                options.types = types
            case "--campuses":
                let campuses = value.split(separator: ",").map { String($0) }
                guard !campuses.isEmpty, campuses.allSatisfy({ !$0.isEmpty }) else {
                    throw ArgumentError(message: "--campuses: expected a comma-separated list, got '\(value)'")
                }
                options.campuses = campuses
            case "--orders": options.orders = try integer(value, flag: name, minimum: 1)
            case "--admin-phone":
                guard !value.isEmpty else { throw ArgumentError(message: "--admin-phone: expected a phone number") }
                options.adminPhone = value
            case "--sources": options.sources = try integer(value, flag: name, minimum: 0, maximum: 250)
            case "--processes": options.processes = try integer(value, flag: name, minimum: 1, maximum: 64)
            case "--threads": options.threads = try integer(value, flag: name, minimum: 1, maximum: 256)
            case "--connect-concurrency": options.connectConcurrency = try integer(value, flag: name, minimum: 1)
            case "--verify-tls": options.verifiesCertificates = true
            case "--json":
                guard !value.isEmpty else { throw ArgumentError(message: "--json: expected a file name") }
                options.jsonPath = value
            case "--plot":
                guard !value.isEmpty else { throw ArgumentError(message: "--plot: expected a file name") }
                options.plotPath = value
            case "--quiet": options.quiet = true
            case "--process-index": options.processIndex = try integer(value, flag: name, minimum: 0)
            case "--process-count": options.processCount = try integer(value, flag: name, minimum: 1)
            default: fatalError("internal inconsistency in ArgumentParser: \(name) has no handler")
            }
        }
        guard let url else { throw ArgumentError(message: "--url is required, e.g. --url ws://127.0.0.1:8080/ws") }
        options.url = url
        guard options.processIndex < options.processCount else {
            throw ArgumentError(message: "--process-index must be below --process-count")
        }
        if options.sources ?? 0 > 0, !url.isIPv4Loopback {
            throw ArgumentError(message: "--sources needs a loopback IPv4 target (127.x.x.x or localhost)")
        }
        if scenario == .race, options.processes > 1 {
            throw ArgumentError(message: "--processes: race runs in one process, so every runner races for the same order")
        }
        if [.feed, .race, .errand].contains(scenario), options.adminPhone == nil {
            throw ArgumentError(message: "--admin-phone is required for \(scenario.rawValue): runners must be approved by an administrator")
        }
        return .run(options)
    }

    private static func integer(_ text: String, flag: String, minimum: Int, maximum: Int = Int.max) throws(ArgumentError) -> Int {
        guard let value = Int(text.replacingUnderscores()), value >= minimum, value <= maximum else {
            let range = maximum == Int.max ? "an integer ≥ \(minimum)" : "an integer from \(minimum) to \(maximum)"
            throw ArgumentError(message: "\(flag): expected \(range), got '\(text)'")
        }
        return value
    }

    private static func positiveNumber(_ text: String, flag: String) throws(ArgumentError) -> Double {
        guard let value = Double(text), value.isFinite, value > 0 else {
            throw ArgumentError(message: "\(flag): expected a positive number, got '\(text)'")
        }
        return value
    }

    static func usage(for scenario: Scenario?) -> String {
        var lines: [String] = []
        if let scenario {
            lines.append("usage: loadtest \(scenario.rawValue) --url ws://HOST:PORT/PATH [options]")
            lines.append("")
            lines.append("  \(scenario.summary)")
        } else {
            lines.append("usage: loadtest <scenario> --url ws://HOST:PORT/PATH [options] [--json FILE]")
            lines.append("       loadtest compare A.json B.json")
            lines.append("")
            lines.append("scenarios:")
            for scenario in Scenario.allCases {
                lines.append("  " + scenario.rawValue.padding(toLength: 13, withPad: " ", startingAt: 0) + scenario.summary)
            }
        }
        lines.append("")
        lines.append("options:")
        for flag in flags where !flag.isInternal {
            if let scenario, !flag.scenarios.isEmpty, !flag.scenarios.contains(scenario) { continue }
            var left = flag.name + (flag.valueName.map { " " + $0 } ?? "")
            if scenario == nil, !flag.scenarios.isEmpty {
                left += " [" + flag.scenarios.map(\.rawValue).sorted().joined(separator: ",") + "]"
            }
            lines.append("  " + left.padding(toLength: 40, withPad: " ", startingAt: 0) + flag.help)
        }
        lines.append("")
        lines.append("The exit status is 0 when the run completed with no violations, 1 otherwise, 2 for usage errors.")
        return lines.joined(separator: "\n")
    }
}

private extension String {
    /// "10_000" reads better than "10000" on a command line.
    func replacingUnderscores() -> String { String(filter { $0 != "_" }) }
}
