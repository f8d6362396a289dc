// Reads the few fields the feed scenario needs from a board-feed event without building a
// JSON tree, so a runner's receive path allocates nothing per delivery.
//
// A board event is `{"data":{…},"event":"feed.enter","seq":N,"type":"express"}`: the server
// writes keys in sorted order, so the top-level "event", "seq" and "type" are the *last*
// occurrences of those keys (orders contain no "event" or "seq" key, and their own "type" is
// the same type). The order id is the first `"id":` (orders carry no other key named id; the
// leave event's `"order_id":` does not match because of the leading quote). The publish time
// is the first `"lt PID NS` text the driver put in the order's public text. Anything this
// scanner cannot read returns nil, and the caller falls back to the full parser.

struct FeedEvent: Equatable {
    enum Kind: Equatable { case enter, update, leave }
    var kind: Kind
    var sequence: Int64
    var orderID: Int64
    /// Index into the type list given to `scan`, or nil when the type is not in it.
    var typeIndex: Int?
    /// Driver process and monotonic send time from the order's text, when present.
    var publisherProcess: Int32?
    var publishedAt: UInt64?
}

enum FeedEventScanner {
    private static let eventKey = Array(#""event":"feed."#.utf8)
    private static let sequenceKey = Array(#""seq":"#.utf8)
    private static let typeKey = Array(#""type":""#.utf8)
    private static let idKey = Array(#""id":"#.utf8)
    private static let orderIDKey = Array(#""order_id":"#.utf8)
    private static let stampKey = Array(#""lt "#.utf8)
    private static let enterName = Array("enter\"".utf8)
    private static let updateName = Array("update\"".utf8)
    private static let leaveName = Array("leave\"".utf8)

    static func scan(_ bytes: UnsafeRawBufferPointer, types: [[UInt8]]) -> FeedEvent? {
        guard let event = lastIndex(of: eventKey, in: bytes) else { return nil }
        let nameStart = event + eventKey.count
        let kind: FeedEvent.Kind
        if matches(enterName, in: bytes, at: nameStart) {
            kind = .enter
        } else if matches(updateName, in: bytes, at: nameStart) {
            kind = .update
        } else if matches(leaveName, in: bytes, at: nameStart) {
            kind = .leave
        } else {
            return nil
        }
        guard let sequenceAt = lastIndex(of: sequenceKey, in: bytes),
              let sequence = integer(in: bytes, at: sequenceAt + sequenceKey.count) else { return nil }
        let idPattern = kind == .leave ? orderIDKey : idKey
        guard let idAt = firstIndex(of: idPattern, in: bytes, from: 0),
              let orderID = integer(in: bytes, at: idAt + idPattern.count) else { return nil }
        var typeIndex: Int?
        if let typeAt = lastIndex(of: typeKey, in: bytes) {
            let start = typeAt + typeKey.count
            for (index, type) in types.enumerated() where matches(type, in: bytes, at: start)
                && start + type.count < bytes.count && bytes[start + type.count] == UInt8(ascii: "\"") {
                typeIndex = index
                break
            }
        } else {
            return nil
        }
        var result = FeedEvent(kind: kind, sequence: sequence, orderID: orderID, typeIndex: typeIndex)
        if kind != .leave, let stampAt = firstIndex(of: stampKey, in: bytes, from: 0) {
            var position = stampAt + stampKey.count
            if let process = unsignedInteger(in: bytes, at: &position), position < bytes.count,
               bytes[position] == UInt8(ascii: " ") {
                position += 1
                if let nanoseconds = unsignedInteger(in: bytes, at: &position) {
                    result.publisherProcess = Int32(truncatingIfNeeded: process)
                    result.publishedAt = nanoseconds
                }
            }
        }
        return result
    }

    /// "lt PID NS": what a publisher writes into the order's public text.
    static func stamp(process: Int32, nanoseconds: UInt64) -> String { "lt \(process) \(nanoseconds)" }

    // MARK: Byte helpers

    private static func matches(_ pattern: [UInt8], in bytes: UnsafeRawBufferPointer, at start: Int) -> Bool {
        guard start >= 0, start + pattern.count <= bytes.count else { return false }
        for offset in 0..<pattern.count where bytes[start + offset] != pattern[offset] { return false }
        return true
    }

    static func firstIndex(of pattern: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return nil }
        var position = start
        let first = pattern[0]
        while position + pattern.count <= bytes.count {
            if bytes[position] == first, matches(pattern, in: bytes, at: position) { return position }
            position += 1
        }
        return nil
    }

    static func lastIndex(of pattern: [UInt8], in bytes: UnsafeRawBufferPointer) -> Int? {
        guard !pattern.isEmpty, bytes.count >= pattern.count else { return nil }
        var position = bytes.count - pattern.count
        let first = pattern[0]
        while position >= 0 {
            if bytes[position] == first, matches(pattern, in: bytes, at: position) { return position }
            position -= 1
        }
        return nil
    }

    private static func integer(in bytes: UnsafeRawBufferPointer, at start: Int) -> Int64? {
        var position = start
        guard let value = unsignedInteger(in: bytes, at: &position), value <= UInt64(Int64.max) else { return nil }
        return Int64(value)
    }

    /// Decimal digits at `position` (at least one, at most 19), advancing past them.
    private static func unsignedInteger(in bytes: UnsafeRawBufferPointer, at position: inout Int) -> UInt64? {
        var value: UInt64 = 0
        var digits = 0
        while position < bytes.count, digits < 19 {
            let byte = bytes[position]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { break }
            value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
            digits += 1
            position += 1
        }
        return digits == 0 ? nil : value
    }
}
