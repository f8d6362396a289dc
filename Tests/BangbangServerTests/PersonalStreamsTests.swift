import BangbangCore
import BangbangStorage
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct PersonalStreamsTests {
    private let user = UserID(rawValue: 7)
    private let start = Timestamp(rawValue: 1_800_000_000_000)

    /// A message of `size` bytes that names its sequence, so a replay can be checked for order.
    private func message(_ sequence: UInt64, size: Int) -> [UInt8] {
        let label = Array("event-\(sequence);".utf8)
        return label + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, size - label.count))
    }

    private func append(_ count: Int, to streams: PersonalStreams, size: Int = 100, at now: Timestamp? = nil) {
        for _ in 0..<count {
            streams.append(for: user, at: now ?? start, makeMessage: { message($0, size: size) }, deliver: { _, _ in })
        }
    }

    private func replay(_ streams: PersonalStreams, after: UInt64, now: Timestamp? = nil) -> PersonalStreams.Replay {
        streams.replay(for: user, after: after, now: now ?? start, register: { _ in })
    }

    private func sequences(_ replay: PersonalStreams.Replay) -> [UInt64]? {
        guard case .events(let messages, _) = replay else { return nil }
        return messages.map { bytes in
            let text = String(decoding: bytes.prefix(while: { $0 != UInt8(ascii: ";") }), as: UTF8.self)
            return UInt64(text.dropFirst("event-".count))!
        }
    }

    private func isResync(_ replay: PersonalStreams.Replay, at position: UInt64) -> Bool {
        if case .resync(let last) = replay { return last == position }
        return false
    }

    @Test func aResumeWithinTheKeptEventsGetsEveryMissedOneInOrder() {
        let streams = PersonalStreams(capacity: 8, byteLimit: 64 * 1024)
        append(20, to: streams)
        #expect(sequences(replay(streams, after: 12)) == Array(13...20))
        #expect(sequences(replay(streams, after: 17)) == [18, 19, 20])
        #expect(sequences(replay(streams, after: 20)) == [])
    }

    @Test func aResumeFromBeforeTheKeptEventsIsToldToResync() {
        let streams = PersonalStreams(capacity: 8, byteLimit: 64 * 1024)
        append(20, to: streams)
        // Event 12 is gone: replaying 13… after 11 would leave a gap.
        #expect(isResync(replay(streams, after: 11), at: 20))
        #expect(isResync(replay(streams, after: 0), at: 20))
        // The numbering is not affected by what is dropped.
        append(1, to: streams)
        #expect(sequences(replay(streams, after: 20)) == [21])
    }

    @Test func theByteLimitBoundsWhatIsKept() {
        let streams = PersonalStreams(capacity: 1_000, byteLimit: 4 * 1024)
        append(30, to: streams, size: 1_000)
        // Four 1,000-byte messages fit in 4 KiB, a fifth does not.
        #expect(sequences(replay(streams, after: 26)) == [27, 28, 29, 30])
        #expect(isResync(replay(streams, after: 25), at: 30))
        let kept = streams.snapshot()[user]!
        #expect(kept.live.reduce(0) { $0 + $1.message.count } <= 4 * 1024)
        #expect(kept.entries.count == 4)
    }

    @Test func anEventLargerThanTheByteLimitIsNotKeptAndAResumeFromBeforeItResyncs() {
        let streams = PersonalStreams(capacity: 32, byteLimit: 1_024)
        append(3, to: streams, size: 200)
        append(1, to: streams, size: 2_000)
        #expect(isResync(replay(streams, after: 3), at: 4))
        #expect(sequences(replay(streams, after: 4)) == [])
        append(1, to: streams, size: 200)
        #expect(sequences(replay(streams, after: 4)) == [5])
    }

    @Test func eventsOlderThanTheRetentionAreNotReplayed() {
        let streams = PersonalStreams(capacity: 32, byteLimit: 64 * 1024, retentionMilliseconds: 60_000)
        append(3, to: streams)
        let later = Timestamp(rawValue: start.rawValue + 60_001)
        #expect(isResync(replay(streams, after: 0, now: later), at: 3))
        #expect(sequences(replay(streams, after: 0, now: Timestamp(rawValue: start.rawValue + 60_000))) == [1, 2, 3])
    }

    @Test func aSnapshotWithMoreThanTheLimitsIsTrimmedOnRestore() {
        let large = PersonalStreams(capacity: 1_000, byteLimit: 1 << 20)
        append(500, to: large)
        let small = PersonalStreams(capacity: 16, byteLimit: 64 * 1024)
        small.restore(large.snapshot(), now: start)
        let restored = small.snapshot()[user]!
        #expect(restored.lastSequence == 500)
        #expect(restored.entries.count == 16)
        #expect(restored.entries.capacity < 64)
        #expect(sequences(replay(small, after: 484)) == Array(485...500))
        #expect(isResync(replay(small, after: 483), at: 500))
    }

    @Test func memoryPerUserStaysBoundedHoweverLongTheHistory() {
        let streams = PersonalStreams(capacity: 32, byteLimit: 8 * 1024)
        append(5_000, to: streams, size: 900)
        let kept = streams.snapshot()[user]!
        #expect(kept.lastSequence == 5_000)
        #expect(kept.live.reduce(0) { $0 + $1.message.count } <= 8 * 1024)
        #expect(kept.entries.capacity <= 64, "dropped entries are not held by the array")
    }

    /// The events kept after each append are the longest run of newest ones within all three
    /// limits, as a plain scan from the newest finds them: for random sizes (some over the byte
    /// limit alone), times that sometimes go backwards, and limits of every kind.
    @Test func keepsTheNewestEventsThatFitEveryLimit() {
        var random = SeededGenerator(seed: 17)
        for round in 0..<40 {
            let capacity = Int(random.next() % 12) + 1
            let byteLimit = Int(random.next() % 3_000) + 1
            let retention = Int64(random.next() % 5_000) + 1
            let streams = PersonalStreams(capacity: capacity, byteLimit: byteLimit, retentionMilliseconds: retention)
            var model: [(sequence: UInt64, at: Int64, size: Int)] = []
            var clock = start.rawValue
            for sequence in 1...200 as ClosedRange<UInt64> {
                clock += Int64(random.next() % 400) - 60
                let size = Int(random.next() % UInt64(byteLimit / 2 + 200)) + 1
                streams.append(for: user, at: Timestamp(rawValue: clock), makeMessage: { message($0, size: size) },
                               deliver: { _, _ in })
                model.append((sequence, clock, message(sequence, size: size).count))
                var keep = 0, bytes = 0
                for entry in model.reversed() {
                    guard keep < capacity, bytes + entry.size <= byteLimit, clock - entry.at <= retention else { break }
                    bytes += entry.size
                    keep += 1
                }
                model.removeFirst(model.count - keep)
                let kept = streams.snapshot()[user]?.live.map(\.sequence) ?? []
                #expect(kept == model.map(\.sequence), "round \(round), event \(sequence)")
            }
        }
    }
}
