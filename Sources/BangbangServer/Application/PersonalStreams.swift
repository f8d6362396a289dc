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

final class PersonalStreams: Sendable {
    typealias Entry = PersonalStream.Entry
    typealias Stream = PersonalStream

    /// Events kept per user (`--stream-events`).
    let capacity: Int
    /// Bytes of messages kept per user (`--stream-bytes`); the newest event is dropped too when it
    /// alone is larger, since a resume from before it would get a gap otherwise.
    let byteLimit: Int
    /// A week: a phone that was off over a long weekend still resumes if little happened.
    let retention: Int64
    private let streams = Mutex<[UserID: Stream]>([:])

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
            let (sequence, message) = appendEntry(to: &table[user, default: Stream()], at: now, makeMessage: makeMessage)
            deliver(sequence, message)
        }
    }

    private func appendEntry(to stream: inout Stream, at now: Timestamp,
                             makeMessage: (UInt64) -> [UInt8]) -> (UInt64, [UInt8]) {
        stream.lastSequence += 1
        let message = makeMessage(stream.lastSequence)
        stream.entries.append(Entry(sequence: stream.lastSequence, at: now, message: message))
        trim(&stream, now: now)
        return (stream.lastSequence, message)
    }

    enum Replay {
        /// Everything after the given sequence, in order (possibly nothing).
        case events([[UInt8]], lastSequence: UInt64)
        /// The events after the given sequence are no longer all kept.
        case resync(lastSequence: UInt64)
    }

    /// What a device that last saw `after` has missed. `register` runs under the same lock, so
    /// no event can slip between the replay and the device's registration for live delivery.
    func replay(for user: UserID, after: UInt64, now: Timestamp, register: (UInt64) -> Void) -> Replay {
        streams.withLock { table in
            let stream = table[user] ?? Stream()
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

    /// A copy of every stream, for a snapshot.
    func snapshot() -> [UserID: Stream] { streams.withLock { $0 } }

    /// Replaces every stream with a snapshot's (at start-up, before anything is appended),
    /// trimmed to these limits: a snapshot written with larger ones keeps only what fits.
    func restore(_ snapshot: [UserID: Stream], now: Timestamp) {
        var trimmed = snapshot
        for user in trimmed.keys {
            trim(&trimmed[user]!, now: now)
            // A fresh array: the decoded one has room for everything the snapshot held.
            var fresh: [Entry] = []
            fresh.reserveCapacity(trimmed[user]!.entries.count)
            fresh.append(contentsOf: trimmed[user]!.entries)
            trimmed[user]!.entries = fresh
        }
        streams.withLock { $0 = trimmed }
    }

    /// Drops what is over the limits at once; the kept arrays are small, so removing from the
    /// front is cheap, and the array's room stays at about `capacity` entries.
    private func trim(_ stream: inout Stream, now: Timestamp) {
        var bytes = 0
        var keep = 0
        for entry in stream.live.reversed() {
            guard keep < capacity, bytes + entry.message.count <= byteLimit,
                  now.rawValue - entry.at.rawValue <= retention else { break }
            bytes += entry.message.count
            keep += 1
        }
        let drop = stream.entries.count - keep
        guard drop > 0 else { return }
        stream.entries.removeFirst(drop)
    }
}
