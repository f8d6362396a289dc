// The personal event stream of every user: what happened to them, numbered 1, 2, 3 … per user.
//
// Events are appended in journal order (from the journal's completions, which run in sequence
// order), so a user's numbering is the same on every device, after every restart (recovery
// replays the journal through the same path), and delivery to each device follows the
// numbering. The encoded message is stored, so a reconnecting device gets exactly the bytes it
// would have got live. Each stream keeps only its last `capacity` events, at most `byteLimit`
// bytes of them and none older than `retention`, so memory grows with users, not with history;
// a device that asks for something no longer kept is told to resynchronize (`resync`), which
// `protocol/` promises for exactly that case.
import BangbangCore
import BangbangStorage
import Foundation
import Synchronization

package final class PersonalStreams: Sendable {
    package typealias Entry = PersonalStream.Entry
    package typealias Stream = PersonalStream

    /// Events kept per user (`--stream-events`).
    let capacity: Int
    /// Bytes of messages kept per user (`--stream-bytes`); the newest event is dropped too when it
    /// alone is larger, since a resume from before it would get a gap otherwise.
    let byteLimit: Int
    /// A week: a phone that was off over a long weekend still resumes if little happened.
    let retention: Int64
    private let streams = Mutex<[UserID: Kept]>([:])

    /// A stream with the byte count of its live messages and a time no later than the oldest
    /// of them, so that trimming after an append reads the entries it drops only, not every one
    /// it keeps (each message a separate allocation, a cache miss apiece).
    private struct Kept {
        var stream: Stream
        var liveBytes: Int
        /// At most the earliest `at` of the live entries: while it is within the retention,
        /// every entry is.
        var earliestAtBound: Int64

        init(_ stream: Stream = Stream()) {
            self.stream = stream
            liveBytes = stream.live.reduce(0) { $0 + $1.message.count }
            earliestAtBound = stream.live.map(\.at.rawValue).min() ?? .max
        }
    }

    init(capacity: Int = 32, byteLimit: Int = 8 * 1024, retentionMilliseconds: Int64 = 7 * 24 * 3600 * 1000) {
        precondition(capacity > 0 && byteLimit > 0, "a personal stream must be able to keep something")
        self.capacity = capacity
        self.byteLimit = byteLimit
        self.retention = retentionMilliseconds
    }

    /// Appends an event for `user`; `makeMessage` builds the bytes from the assigned sequence.
    /// `deliver` runs under the stream lock so deliveries for one user are enqueued in order.
    func append(for user: UserID, at now: Timestamp, makeMessage: (UInt64) -> [UInt8],
                deliver: (UInt64, [UInt8]) -> Void) {
        streams.withLock { table in
            // In place: copying the stream out of the table and back would copy every kept
            // entry (up to `capacity`) on each append.
            let (sequence, message) = appendEntry(to: &table[user, default: Kept()], at: now, makeMessage: makeMessage)
            deliver(sequence, message)
        }
    }

    private func appendEntry(to kept: inout Kept, at now: Timestamp,
                             makeMessage: (UInt64) -> [UInt8]) -> (UInt64, [UInt8]) {
        kept.stream.lastSequence += 1
        let message = makeMessage(kept.stream.lastSequence)
        kept.stream.entries.append(Entry(sequence: kept.stream.lastSequence, at: now, message: message))
        kept.liveBytes += message.count
        kept.earliestAtBound = min(kept.earliestAtBound, now.rawValue)
        trim(&kept, now: now)
        return (kept.stream.lastSequence, message)
    }

    package enum Replay {
        /// Everything after the given sequence, in order (possibly nothing).
        case events([[UInt8]], lastSequence: UInt64)
        /// The events after the given sequence are no longer all kept.
        case resync(lastSequence: UInt64)
    }

    /// What a device that last saw `after` has missed. `register` runs under the same lock, so
    /// no event can slip between the replay and the device's registration for live delivery.
    func replay(for user: UserID, after: UInt64, now: Timestamp, register: (UInt64) -> Void) -> Replay {
        streams.withLock { table in
            let stream = table[user]?.stream ?? Stream()
            register(stream.lastSequence)
            // Ahead of the stream: the device saw numbers this server never gave (it was restored
            // from a backup); what it holds may be stale, and the next numbers mean other events.
            if after > stream.lastSequence { return .resync(lastSequence: stream.lastSequence) }
            if after == stream.lastSequence { return .events([], lastSequence: stream.lastSequence) }
            let live = stream.live.filter { now.rawValue - $0.at.rawValue <= retention }
            guard let first = live.first, first.sequence <= after + 1 else {
                return .resync(lastSequence: stream.lastSequence)
            }
            return .events(live.filter { $0.sequence > after }.map(\.message), lastSequence: stream.lastSequence)
        }
    }

    /// The number of `user`'s last event (0 before the first).
    func lastSequence(of user: UserID) -> UInt64 {
        streams.withLock { $0[user]?.stream.lastSequence ?? 0 }
    }

    /// The events of `user` still kept after `after` (within the retention), with their numbers,
    /// and the stream's last number: what the owner answers a node that follows the stream
    /// (PersonalStreamQuery.swift), which judges itself what the answer no longer reaches.
    package func kept(for user: UserID, after: UInt64, now: Timestamp) -> (last: UInt64, events: [(number: UInt64, message: [UInt8])]) {
        streams.withLock { table in
            guard let stream = table[user]?.stream else { return (0, []) }
            let events = stream.live.filter { $0.sequence > after && now.rawValue - $0.at.rawValue <= retention }
            return (stream.lastSequence, events.map { ($0.sequence, $0.message) })
        }
    }

    /// A copy of every stream, for a snapshot.
    package func snapshot() -> [UserID: Stream] { streams.withLock { $0.mapValues(\.stream) } }

    /// Replaces every stream with a snapshot's (at start-up, before anything is appended),
    /// trimmed to these limits: a snapshot written with larger ones keeps only what fits.
    func restore(_ snapshot: [UserID: Stream], now: Timestamp) {
        var trimmed = snapshot.mapValues { Kept($0) }
        for user in trimmed.keys {
            trim(&trimmed[user]!, now: now)
            // A fresh array: the decoded one has room for everything the snapshot held.
            var fresh: [Entry] = []
            fresh.reserveCapacity(trimmed[user]!.stream.entries.count)
            fresh.append(contentsOf: trimmed[user]!.stream.entries)
            trimmed[user]!.stream.entries = fresh
        }
        streams.withLock { $0 = trimmed }
    }

    /// Keeps the longest run of newest events that is within all three limits (at most
    /// `capacity` events, `byteLimit` bytes, none older than `retention`) and drops the rest at
    /// once; the kept arrays are small, so removing from the front is cheap, and the array's
    /// room stays at about `capacity` entries.
    private func trim(_ kept: inout Kept, now: Timestamp) {
        // Measured first, the slice released before the entries are changed (or they would
        // be copied).
        let (keep, bytes, earliestAt) = measure(kept.stream.live, liveBytes: kept.liveBytes,
                                                earliestAtBound: kept.earliestAtBound, now: now)
        if let earliestAt { kept.earliestAtBound = earliestAt }
        let drop = kept.stream.entries.count - keep
        guard drop > 0 else { return }
        kept.stream.entries.removeFirst(drop)
        kept.liveBytes = bytes
    }

    /// How many of the newest events to keep and their bytes, and, when the entries' times had
    /// to be read, the earliest of the kept ones.
    private func measure(_ live: ArraySlice<Entry>, liveBytes: Int, earliestAtBound: Int64,
                         now: Timestamp) -> (keep: Int, bytes: Int, earliestAt: Int64?) {
        // The newest events within the retention, at most `capacity` of them. Nearly always
        // every entry is within it, which the bound tells without reading them.
        var keep = 0
        var earliestAt: Int64?
        if now.rawValue - earliestAtBound <= retention {
            keep = min(live.count, capacity)
        } else {
            var earliest = Int64.max
            for entry in live.reversed() {
                guard keep < capacity, now.rawValue - entry.at.rawValue <= retention else { break }
                earliest = min(earliest, entry.at.rawValue)
                keep += 1
            }
            earliestAt = earliest
        }
        // Then the byte limit, from the oldest of those: drop while the rest is too large.
        var bytes = liveBytes
        var first = live.startIndex
        while first < live.endIndex - keep {
            bytes -= live[first].message.count
            first += 1
        }
        while keep > 0, bytes > byteLimit {
            bytes -= live[first].message.count
            first += 1
            keep -= 1
        }
        return (keep, bytes, earliestAt)
    }
}
