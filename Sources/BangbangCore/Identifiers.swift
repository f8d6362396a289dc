// BangbangCore: the domain of the errand app — accounts, orders, boards, lifecycle.
//
// Theory of operation. The domain is pure and deterministic: no sockets, files, clocks,
// Dispatch or global state. Every change is made in two steps:
//   1. decide: a command plus the current state (and `now`, and a random source where a
//      secret is needed) yields either a typed `DomainError` or an event describing the change.
//      Deciding never mutates.
//   2. apply: the event is applied to the state. `apply` is the only mutation, it cannot
//      fail, and replaying the same events in the same order yields the same state.
// The server journals the event between the two steps (durable before anyone is told), and
// recovery is replaying the journal through `apply`. Events and state are `Codable` so the
// journal and snapshots can store them.
//
// This file holds the identifiers and values every part of the domain shares.

/// Milliseconds since the Unix epoch. The domain never reads a clock; callers pass `now`.
public struct Timestamp: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(milliseconds: Int64) { self.rawValue = milliseconds }
    public var milliseconds: Int64 { rawValue }
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.rawValue < rhs.rawValue }
    public func adding(milliseconds: Int64) -> Timestamp { Timestamp(rawValue: rawValue + milliseconds) }
    public var description: String { "\(rawValue)ms" }
}

/// An account. Allocated by the account store, never reused.
public struct UserID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ value: UInt64) { self.rawValue = value }
    public static func < (lhs: UserID, rhs: UserID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// An order. Unique across all boards and never reused: the low `OrderID.shardBits` bits name
/// the board shard that owns it (so any order can be routed to its owner from its id alone),
/// the rest is that shard's own serial number.
public struct OrderID: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    public static let shardBits: UInt64 = 8
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(shard: Int, serial: UInt64) {
        precondition(shard >= 0 && UInt64(shard) < (1 << Self.shardBits), "shard index out of range")
        self.rawValue = serial << Self.shardBits | UInt64(shard)
    }
    public var shard: Int { Int(rawValue & ((1 << Self.shardBits) - 1)) }
    public var serial: UInt64 { rawValue >> Self.shardBits }
    public static func < (lhs: OrderID, rhs: OrderID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { String(rawValue) }
}

/// The four kinds of request the app publishes (product brief, "The four order types").
public enum OrderType: String, CaseIterable, Codable, Hashable, Sendable {
    case express    // 代取快递: pick up a parcel
    case purchase   // 代购配送: buy and deliver
    case bounty     // 悬赏任务: bounty task
    case group      // 拼车拼团: carpool / group buy
}

/// Money in integer cents (分) of CNY; never floating point.
public typealias Cents = Int64
