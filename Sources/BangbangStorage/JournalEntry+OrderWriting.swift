// Order records written straight into the keyed binary form, without Codable. Every change to an
// order is journaled on its shard's queue, and the generic encoder spent most of its time in
// Codable's containers rather than in bytes; this writes the same bytes directly, in the order the
// synthesized `encode(to:)` methods write them, so the decoder (still Codable) reads them unchanged.
// A test holds the two paths together for every kind of change and every optional field.
import BangbangCore

/// A type that writes its keyed binary form directly, byte for byte what its
/// `encode(to:)` makes through `KeyedBinaryEncoder`; the encoder uses it wherever such a value
/// appears. A second schema of the type, kept in step by `JournalEntryEncodingTests` (orders) and
/// `SnapshotTests` (shards).
protocol KeyedBinaryWritable: Encodable {
    func write(to writer: inout KeyedBinaryWriter)
}

extension Order: KeyedBinaryWritable {
    func write(to writer: inout KeyedBinaryWriter) { writer.write(self) }
}

/// Writes keyed binary values (KeyedBinaryFormat.swift) into one byte array.
///
/// An order is some sixty small values (a tag, a key, a number), and appending them to the array
/// one by one checked the array's uniqueness and capacity for every byte: most of the cost of
/// writing an order. They are gathered in a small buffer inside the writer instead and appended
/// a block at a time; `bytes` appends what is still gathered before it hands the array out.
struct KeyedBinaryWriter {
    /// Everything written except what `pending` still holds.
    private var written: [UInt8]
    private var pending = PendingBytes()

    init(header: UInt8) {
        written = [header]
        written.reserveCapacity(512)
    }

    /// Goes on writing at the end of `bytes` (move the array in to avoid a copy).
    init(continuing bytes: [UInt8]) {
        written = bytes
    }

    /// Everything written so far.
    var bytes: [UInt8] {
        mutating get {
            flush()
            return written
        }
    }

    mutating func beginKeyed() { put(KeyedBinaryTag.keyed) }
    mutating func endKeyed() { put(KeyedBinaryTag.endOfKeyed) }
    mutating func beginUnkeyed() { put(KeyedBinaryTag.unkeyed) }
    mutating func endUnkeyed() { put(KeyedBinaryTag.endOfUnkeyed) }

    mutating func key(_ name: StaticString) {
        putLEB128(UInt64(name.utf8CodeUnitCount) + 1)
        put(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    mutating func write(signed value: Int64) {
        put(KeyedBinaryTag.signed)
        putLEB128(KeyedBinaryInteger.zigzag(value))
    }

    mutating func write(unsigned value: UInt64) {
        put(KeyedBinaryTag.unsigned)
        putLEB128(value)
    }

    mutating func write(_ value: Bool) { put(value ? KeyedBinaryTag.trueValue : KeyedBinaryTag.falseValue) }

    mutating func writeNull() { put(KeyedBinaryTag.null) }

    mutating func write(_ value: String) {
        put(KeyedBinaryTag.string)
        value.withUTF8Bytes { utf8 in
            putLEB128(UInt64(utf8.count))
            put(utf8)
        }
    }

    // The buffer.

    /// Room for a few dozen small values, inside the writer.
    private struct PendingBytes {
        static let capacity = 256
        var storage: SIMD32<UInt64> = .zero
        var count = 0
    }

    private mutating func flush() {
        guard pending.count > 0 else { return }
        let count = pending.count
        withUnsafeBytes(of: &pending.storage) { written.append(contentsOf: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        pending.count = 0
    }

    /// Makes room for `count` more bytes in the buffer (at most its capacity).
    private mutating func reserve(_ count: Int) {
        if pending.count + count > PendingBytes.capacity { flush() }
    }

    private mutating func put(_ byte: UInt8) {
        reserve(1)
        let offset = pending.count
        withUnsafeMutableBytes(of: &pending.storage) { $0[offset] = byte }
        pending.count = offset + 1
    }

    private mutating func putLEB128(_ value: UInt64) {
        reserve(KeyedBinaryInteger.maximumBytes)
        let offset = pending.count
        let length = withUnsafeMutableBytes(of: &pending.storage) {
            KeyedBinaryInteger.writeLEB128(value, at: $0.baseAddress! + offset)
        }
        pending.count = offset + length
    }

    private mutating func put(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count <= PendingBytes.capacity / 2 else {
            // Long text goes straight to the array, after what is gathered.
            flush()
            written.append(contentsOf: bytes)
            return
        }
        reserve(bytes.count)
        let offset = pending.count
        withUnsafeMutableBytes(of: &pending.storage) { storage in
            UnsafeMutableRawBufferPointer(rebasing: storage[offset..<(offset + bytes.count)]).copyMemory(from: bytes)
        }
        pending.count = offset + bytes.count
    }

    // Members, as the synthesized code writes them (optionals only when present).

    mutating func member(_ name: StaticString, _ value: String) { key(name); write(value) }
    mutating func member(_ name: StaticString, _ value: String?) { if let value { member(name, value) } }
    mutating func member(_ name: StaticString, _ value: Int64) { key(name); write(signed: value) }
    mutating func member(_ name: StaticString, _ value: Int) { key(name); write(signed: Int64(value)) }
    mutating func member(_ name: StaticString, _ value: Int?) { if let value { member(name, value) } }
    mutating func member(_ name: StaticString, _ value: Bool) { key(name); write(value) }
    mutating func member(_ name: StaticString, _ value: Timestamp) { key(name); write(signed: value.rawValue) }
    mutating func member(_ name: StaticString, _ value: Timestamp?) { if let value { member(name, value) } }
    mutating func member(_ name: StaticString, _ value: UserID) { key(name); write(unsigned: value.rawValue) }
    mutating func member(_ name: StaticString, _ value: UserID?) { if let value { member(name, value) } }

    mutating func member(_ name: StaticString, _ users: [UserID]) {
        key(name)
        beginUnkeyed()
        for user in users { write(unsigned: user.rawValue) }
        endUnkeyed()
    }

    /// `{name: {…}}`: an enum case's container, as synthesized enum coding nests it.
    mutating func enumCase(_ name: StaticString, _ body: (inout KeyedBinaryWriter) -> Void) {
        key(name)
        beginKeyed()
        body(&self)
        endKeyed()
    }
}

extension JournalEntry {
    /// The keyed binary form of `.order(shard:, event)`, byte for byte what `KeyedBinaryEncoder` makes.
    static func encodeOrderRecord(shard: Int, event: OrderEvent) -> [UInt8] {
        var writer = KeyedBinaryWriter(header: keyedBinaryFormatTag)
        writer.beginKeyed()
        writer.enumCase("order") { writer in
            writer.member("shard", shard)
            writer.key("_1")
            writer.write(event)
        }
        writer.endKeyed()
        return writer.bytes
    }
}

extension KeyedBinaryWriter {
    mutating func write(_ event: OrderEvent) {
        beginKeyed()
        key("orderID")
        write(unsigned: event.orderID.rawValue)
        member("at", event.at)
        member("actor", event.actor)
        key("change")
        write(event.change)
        member("notify", event.notify)
        endKeyed()
    }

    mutating func write(_ change: OrderChange) {
        beginKeyed()
        switch change {
        case .published(let order):
            enumCase("published") { $0.key("_0"); $0.write(order) }
        case .accepted(let runner):
            enumCase("accepted") { $0.member("runner", runner) }
        case .progressed(let status):
            enumCase("progressed") { $0.member("to", status.rawValue) }
        case .delivered(let autoConfirmAt):
            enumCase("delivered") { $0.member("autoConfirmAt", autoConfirmAt) }
        case .confirmed(let automatic):
            enumCase("confirmed") { $0.member("automatic", automatic) }
        case .abandoned(let runner):
            enumCase("abandoned") { $0.member("runner", runner) }
        case .cancelled(let cancellation):
            enumCase("cancelled") { $0.key("_0"); $0.write(cancellation) }
        case .expired:
            enumCase("expired") { _ in }
        case .tipRaised(let tip):
            enumCase("tipRaised") { $0.member("to", tip) }
        case .joined(let user):
            enumCase("joined") { $0.member("_0", user) }
        case .left(let user):
            enumCase("left") { $0.member("_0", user) }
        case .closedForJoining:
            enumCase("closedForJoining") { _ in }
        case .groupCompleted(let automatic):
            enumCase("groupCompleted") { $0.member("automatic", automatic) }
        case .rated(let byPublisher, let rating):
            enumCase("rated") { $0.member("byPublisher", byPublisher); $0.key("_1"); $0.write(rating) }
        case .movedToArchive:
            enumCase("movedToArchive") { _ in }
        }
        endKeyed()
    }

    mutating func write(_ order: Order) {
        beginKeyed()
        key("id")
        write(unsigned: order.id.rawValue)
        member("publisher", order.publisher)
        member("campus", order.campus)
        member("createdAt", order.createdAt)
        member("deadline", order.deadline)
        member("tip", order.tip)
        member("status", order.status.rawValue)
        member("runner", order.runner)
        member("acceptedAt", order.acceptedAt)
        member("autoConfirmAt", order.autoConfirmAt)
        member("deliveryCode", order.deliveryCode)
        key("details")
        write(order.details)
        member("participants", order.participants)
        key("timeline")
        beginUnkeyed()
        for entry in order.timeline {
            beginKeyed()
            member("status", entry.status.rawValue)
            member("at", entry.at)
            member("actor", entry.actor)
            member("note", entry.note)
            endKeyed()
        }
        endUnkeyed()
        if let cancellation = order.cancellation {
            key("cancellation")
            write(cancellation)
        }
        if let rating = order.ratingByPublisher {
            key("ratingByPublisher")
            write(rating)
        }
        if let rating = order.ratingByRunner {
            key("ratingByRunner")
            write(rating)
        }
        member("revision", order.revision)
        member("searchText", order.searchText)
        endKeyed()
    }

    mutating func write(_ cancellation: Cancellation) {
        beginKeyed()
        member("cause", cancellation.cause.rawValue)
        member("reason", cancellation.reason)
        member("fee", cancellation.fee)
        member("runner", cancellation.runner)
        endKeyed()
    }

    mutating func write(_ rating: Rating) {
        beginKeyed()
        member("stars", rating.stars)
        member("comment", rating.comment)
        member("at", rating.at)
        endKeyed()
    }

    mutating func write(_ details: OrderDetails) {
        beginKeyed()
        switch details {
        case .express(let express):
            enumCase("express") { writer in
                writer.key("_0")
                writer.beginKeyed()
                writer.member("pickupStation", express.pickupStation)
                writer.member("pickupCode", express.pickupCode)
                writer.member("parcelSize", express.parcelSize.rawValue)
                writer.member("dropOffPlace", express.dropOffPlace)
                writer.member("dropOffRoom", express.dropOffRoom)
                writer.member("contactPhone", express.contactPhone)
                writer.endKeyed()
            }
        case .purchase(let purchase):
            enumCase("purchase") { writer in
                writer.key("_0")
                writer.beginKeyed()
                writer.key("items")
                writer.beginUnkeyed()
                for item in purchase.items {
                    writer.beginKeyed()
                    writer.member("name", item.name)
                    writer.member("qty", item.quantity)
                    writer.member("note", item.note)
                    writer.endKeyed()
                }
                writer.endUnkeyed()
                writer.member("store", purchase.store)
                writer.member("goodsBudget", purchase.goodsBudget)
                writer.member("dropOffPlace", purchase.dropOffPlace)
                writer.member("dropOffRoom", purchase.dropOffRoom)
                writer.endKeyed()
            }
        case .bounty(let bounty):
            enumCase("bounty") { writer in
                writer.key("_0")
                writer.beginKeyed()
                writer.member("title", bounty.title)
                writer.member("description", bounty.description)
                writer.member("place", bounty.place)
                writer.endKeyed()
            }
        case .group(let group):
            enumCase("group") { writer in
                writer.key("_0")
                writer.beginKeyed()
                writer.member("kind", group.kind.rawValue)
                writer.member("subject", group.subject)
                writer.member("closesAt", group.closesAt)
                writer.member("capacity", group.capacity)
                writer.member("minimumFill", group.minimumFill)
                writer.member("pricePerShare", group.pricePerShare)
                writer.endKeyed()
            }
        }
        endKeyed()
    }
}
