// Structured logs: one event per line in logfmt (`ts=… level=info event=listening port=8080`),
// written to standard error with a single write(2) per line so lines from different threads never
// interleave. Values are quoted only when they need it. Secrets are never passed here: callers log
// ids, not tokens or codes (the development SMS provider is the one deliberate exception).
import Foundation
import Synchronization
import WebSocketServer

public enum LogLevel: Int, Sendable, Comparable {
    case debug, info, warning, error
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    public init?(name: String) {
        switch name {
        case "debug": self = .debug
        case "info": self = .info
        case "warning": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    package var name: String {
        switch self {
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }
}

public final class Logger: Sendable {
    private let minimumLevel: Mutex<LogLevel>
    private let sink: @Sendable (String) -> Void

    public init(level: LogLevel = .info, sink: (@Sendable (String) -> Void)? = nil) {
        self.minimumLevel = Mutex(level)
        self.sink = sink ?? { line in
            var bytes = Array(line.utf8)
            bytes.append(0x0A)
            bytes.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
        }
    }

    public var level: LogLevel {
        get { minimumLevel.withLock { $0 } }
        set { minimumLevel.withLock { $0 = newValue } }
    }

    public func log(_ level: LogLevel, _ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable> = [:]) {
        guard level >= self.level else { return }
        var line = "ts=\(Self.timestamp()) level=\(level.name) event=\(Self.quoted(event))"
        for (key, value) in fields {
            line += " \(key)=\(Self.quoted(value.description))"
        }
        sink(line)
    }

    public func debug(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable> = [:]) {
        log(.debug, event, fields)
    }
    public func info(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable> = [:]) {
        log(.info, event, fields)
    }
    public func warning(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable> = [:]) {
        log(.warning, event, fields)
    }
    public func error(_ event: String, _ fields: KeyValuePairs<String, any CustomStringConvertible & Sendable> = [:]) {
        log(.error, event, fields)
    }

    static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.contains { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }
        guard needsQuotes else { return value }
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900, parts.tm_mon + 1,
                      parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, now.tv_nsec / 1_000_000)
    }
}

extension Logger: EventLog {}
