// The account owner's answer to a node's question "the events of this user after N"
// (Cluster's PersonalStreamFollower asks it; docs/scale-out.md section 7, "Resume on any node"):
// the stream's last number and the events the owner still keeps after N, each with its number and
// its push message exactly as the user's devices were sent it. Sans-I/O, no imports, fuzzed with
// the inbox's decoders (`fuzz/inbox-protocol`).
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
        var offset = 0
        func read(_ width: Int) -> UInt64? {
            guard bytes.count - offset >= width else { return nil }
            defer { offset += width }
            return bytes[offset..<offset + width].reduce(0) { $0 << 8 | UInt64($1) }
        }
        guard bytes.first == marker else { return nil }
        offset = 1
        guard let last = read(8), let count = read(4) else { return nil }
        // Each event takes at least 12 bytes: a count beyond what remains is a lie, refused
        // before anything is reserved for it.
        guard count <= UInt64((bytes.count - offset) / 12) else { return nil }
        var events: [Event] = []
        events.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let number = read(8), let length = read(4), UInt64(bytes.count - offset) >= length,
                  number <= last, number > (events.last?.number ?? 0) else { return nil }
            events.append(Event(number: number, message: Array(bytes[offset..<offset + Int(length)])))
            offset += Int(length)
        }
        return offset == bytes.count ? (last, events) : nil
    }
}
