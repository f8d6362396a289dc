// One message of a cluster's history stream (HistoryStream.swift): closed orders, each in its
// stored form (`StoredOrder`, the bytes the archive keeps). Sans-I/O. Big-endian:
//   "BH" | version 1 | count: u32 | (length: u32 | order bytes) * count
// Every length is checked against what remains before anything is copied; a message that does
// not parse is refused whole, never half applied.

package enum HistoryBatch {
    static let magic: [UInt8] = [0x42, 0x48]
    static let version: UInt8 = 1

    /// What one message may hold, about: orders beyond it start the next message, so no message
    /// comes near NATS's default 1 MiB payload limit.
    static let targetBytes = 256 * 1024

    package struct Malformed: Error, Equatable {
        let reason: String
    }

    /// The orders' stored bytes as messages of about `targetBytes` each (an order larger than that
    /// travels alone), in order.
    package static func encode(_ orders: [[UInt8]], targetBytes: Int = targetBytes) -> [[UInt8]] {
        var messages: [[UInt8]] = []
        var start = 0
        while start < orders.count {
            var end = start
            var size = 7
            repeat {
                size += 4 + orders[end].count
                end += 1
            } while end < orders.count && size + 4 + orders[end].count <= targetBytes
            messages.append(message(orders[start..<end]))
            start = end
        }
        return messages
    }

    private static func message(_ orders: ArraySlice<[UInt8]>) -> [UInt8] {
        var bytes = magic + [version]
        bytes.reserveCapacity(7 + orders.reduce(0) { $0 + 4 + $1.count })
        append(UInt32(orders.count), to: &bytes)
        for order in orders {
            append(UInt32(order.count), to: &bytes)
            bytes.append(contentsOf: order)
        }
        return bytes
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        for shift in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// The stored bytes of each order in `message`.
    package static func decode(_ message: [UInt8]) throws(Malformed) -> [[UInt8]] {
        guard message.count >= 7, Array(message[0..<2]) == magic else { throw Malformed(reason: "not a history batch") }
        guard message[2] == version else { throw Malformed(reason: "history batch version \(message[2])") }
        var offset = 3
        func readLength() throws(Malformed) -> Int {
            guard message.count - offset >= 4 else { throw Malformed(reason: "truncated at byte \(offset)") }
            var value = 0
            for index in offset..<(offset + 4) { value = value << 8 | Int(message[index]) }
            offset += 4
            return value
        }
        let count = try readLength()
        // Each order takes at least its 4-byte length: a count beyond that is a lie, refused
        // before anything is reserved for it.
        guard count <= (message.count - offset) / 4 else { throw Malformed(reason: "count \(count) beyond the message") }
        var orders: [[UInt8]] = []
        orders.reserveCapacity(count)
        for _ in 0..<count {
            let length = try readLength()
            guard length <= message.count - offset else { throw Malformed(reason: "order of \(length) bytes beyond the message") }
            orders.append(Array(message[offset..<(offset + length)]))
            offset += length
        }
        guard offset == message.count else { throw Malformed(reason: "\(message.count - offset) bytes after the last order") }
        return orders
    }
}
