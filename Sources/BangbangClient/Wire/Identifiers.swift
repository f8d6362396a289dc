// Ids and times as the protocol gives them: integers, never passed through a Double.
import JSON
import Foundation

/// An order's id. Unique and never reused, but opaque: ids are not in publish order (an id names
/// the server's shard), so sort by `createdAt`.
public struct OrderID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByIntegerLiteral, WireDecodable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { rawValue = value }
    public static func < (lhs: OrderID, rhs: OrderID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) { rawValue = try Int64(wire: value, at: path) }
}

/// A user's id. People start at 1; 0 is the built-in administrator of `bangbang admin`.
public struct UserID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByIntegerLiteral, WireDecodable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { rawValue = value }
    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) { rawValue = try Int64(wire: value, at: path) }
}

/// A moment as the protocol counts it: milliseconds since the Unix epoch, exact.
public struct Timestamp: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible, WireDecodable {
    public var milliseconds: Int64
    public var rawValue: Int64 { milliseconds }

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public init(rawValue: Int64) { milliseconds = rawValue }

    /// The moment of `date`, to the millisecond.
    public init(_ date: Date) { milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    public static var now: Timestamp { Timestamp(Date()) }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// This moment moved by `duration` (to the millisecond).
    public func advanced(by duration: Duration) -> Timestamp {
        let (seconds, attoseconds) = duration.components
        return Timestamp(milliseconds: milliseconds + seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }
    public var description: String { String(milliseconds) }

    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) { milliseconds = try Int64(wire: value, at: path) }

    var wireValue: JSONValue { .integer(milliseconds) }
}

extension Duration {
    /// A protocol duration given in milliseconds.
    static func protocolMilliseconds(_ value: Int64) -> Duration { .milliseconds(value) }

    /// Whole milliseconds, rounded down.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
