// One event of a user's personal stream as its account partition's owner publishes it on the user
// subjects (`bb.user.<bucket>`): the user, the event's number in their stream, and its push message
// exactly as the user's devices are sent it. A node holding a device of the user reads it (the
// server's FollowedStreams) and passes the message on unchanged. Sans-I/O, no imports, fuzzed with
// the inbox's decoders (`fuzz/inbox-protocol`).
//
// Binary and big-endian:  user:u64 | number:u64 | message
// User and number are at least 1 and the message is not empty; anything else is refused whole.

public enum PersonalEventFrame {
    public struct Event: Sendable, Equatable {
        public let user: UInt64
        public let number: UInt64
        public let message: ArraySlice<UInt8>

        public init(user: UInt64, number: UInt64, message: ArraySlice<UInt8>) {
            self.user = user
            self.number = number
            self.message = message
        }
    }

    static let headerSize = 16

    public static func encode(user: UInt64, number: UInt64, message: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerSize + message.count)
        InboxCodec.append(user, to: &bytes)
        InboxCodec.append(number, to: &bytes)
        bytes += message
        return bytes
    }

    /// The event in `bytes` (its message a slice of them, not a copy), or nil when they are not one.
    public static func decode(_ bytes: ArraySlice<UInt8>) -> Event? {
        var reader = Reader(bytes: bytes)
        guard let user = try? reader.integer(UInt64.self), let number = try? reader.integer(UInt64.self),
              user >= 1, number >= 1, reader.remaining > 0 else { return nil }
        return Event(user: user, number: number, message: reader.bytes)
    }
}
