// The personal event stream of every user: what happened to them, numbered 1, 2, 3 … per user.
//
// Events are appended in journal order (from the journal's completions, which run in sequence
// order), so a user's numbering is the same on every device, after every restart (recovery
// replays the journal through the same path), and delivery to each device follows the
// numbering. The encoded message is stored, so a reconnecting device gets exactly the bytes it
// would have got live. Each stream keeps its last `capacity` events and at most `retention`
// milliseconds of them; a device that asks for something older is told to resynchronize.
import BangbangCore
import BangbangStorage
import Foundation
import Synchronization

final class PersonalStreams: Sendable {
    typealias Entry = PersonalStream.Entry
    typealias Stream = PersonalStream

    /// 1,000 events covers a very busy user's day several times over.
    let capacity: Int
    /// A week: a phone that was off over a long weekend still resumes without a gap.
    let retention: Int64
    private let streams = Mutex<[UserID: Stream]>([:])

    init(capacity: Int = 1_000, retentionMilliseconds: Int64 = 7 * 24 * 3600 * 1000) {
        self.capacity = capacity
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

    /// Replaces every stream with a snapshot's (at start-up, before anything is appended).
    func restore(_ snapshot: [UserID: Stream]) { streams.withLock { $0 = snapshot } }

    private func trim(_ stream: inout Stream, now: Timestamp) {
        while stream.entries.count - stream.firstIndex > capacity
                || (stream.firstIndex < stream.entries.count
                    && now.rawValue - stream.entries[stream.firstIndex].at.rawValue > retention) {
            stream.firstIndex += 1
        }
        if stream.firstIndex > 64 && stream.firstIndex * 2 > stream.entries.count {
            stream.entries.removeFirst(stream.firstIndex)
            stream.firstIndex = 0
        }
    }
}
