// The account owner's answer to a node's question "the events of this user after N" (Cluster's
// PersonalStreamFollower asks it, when a device resumes on a node that does not own the user's
// account, or when the node saw a number skip): the stream's last number and the events the owner
// still keeps after N, each with its number and its push message exactly as the user's devices were
// sent it. Sans-I/O, no imports, fuzzed with the inbox's decoders (`fuzz/inbox-protocol`).
//
// Binary and big-endian, every length checked against what remains before anything is copied:
//   0x00 | last:u64 | count:u32 | (number:u64 | length:u32 | message)*
// The leading 0 tells it from a JSON reply (`{`), which is what a refused question gets. Numbers
// rise and none is above `last`; an answer that breaks either is refused whole.

public enum PersonalStreamAnswer {
    public struct Event: Sendable, Equatable {
        public let number: UInt64
        public let message: [UInt8]

        public init(number: UInt64, message: [UInt8]) {
            self.number = number
            self.message = message
        }
    }

    static let marker: UInt8 = 0

    public static func encode(last: UInt64, events: [Event]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(13 + events.reduce(0) { $0 + 12 + $1.message.count })
        bytes.append(marker)
        InboxCodec.append(last, to: &bytes)
        InboxCodec.append(UInt32(events.count), to: &bytes)
        for event in events {
            InboxCodec.append(event.number, to: &bytes)
            InboxCodec.append(UInt32(event.message.count), to: &bytes)
            bytes += event.message
        }
        return bytes
    }

    /// The answer in `bytes`, or nil when they are not one.
    public static func decode(_ bytes: [UInt8]) -> (last: UInt64, events: [Event])? {
        var reader = Reader(bytes: bytes[...])
        guard (try? reader.byte()) == marker, let last = try? reader.integer(UInt64.self),
              let count = try? reader.integer(UInt32.self),
              // Each event takes at least 12 bytes: a count beyond what remains is a lie, refused
              // before anything is reserved for it.
              Int(count) <= reader.remaining / 12 else { return nil }
        var events: [Event] = []
        events.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let number = try? reader.integer(UInt64.self), let length = try? reader.integer(UInt32.self),
                  number <= last, number > (events.last?.number ?? 0),
                  let message = try? reader.bytes(Int(length)) else { return nil }
            events.append(Event(number: number, message: Array(message)))
        }
        return reader.remaining == 0 ? (last, events) : nil
    }
}
