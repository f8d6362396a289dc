// The order written straight to bytes, for the messages sent most: replies to order operations,
// `order.changed` pushes and feed events. The same JSON as `OrderWire.encode` followed by
// `JSONWriter`, member for member and byte for byte (a test holds the two paths together), without
// building the dictionaries in between. Members are written in key order.
import BangbangCore

extension OrderWire {
    /// `{"order": <view>}`, the data of a reply that carries one order.
    public static func orderData(_ view: OrderView) -> [UInt8] {
        orderData(encodedView: encoded(view))
    }

    /// The view alone, to be spliced into several messages (`orderData(encodedView:)`).
    public static func encoded(_ view: OrderView) -> [UInt8] {
        var writer = JSONWriter(capacity: 768)
        write(view, to: &writer)
        return writer.bytes
    }

    /// `{"order": <view>}` around a view already encoded by `encoded(_:)`.
    public static func orderData(encodedView: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: encodedView.count + 16)
        writeOrderData(encodedView: encodedView, to: &writer)
        return writer.bytes
    }

    /// `orderData(encodedView:)` written into a message being built (a reply).
    public static func writeOrderData(encodedView: [UInt8], to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("order")
        writer.write(encoded: encodedView)
        writer.endObject()
    }

    /// `{"change": <change>, "order": <view>}`, an `order.changed` event's data, with the view
    /// written straight in.
    public static func changedData(change: String, view: OrderView) -> [UInt8] {
        var writer = JSONWriter(capacity: 800)
        writer.beginObject()
        writer.key("change")
        writer.write(string: change)
        writer.key("order")
        write(view, to: &writer)
        writer.endObject()
        return writer.bytes
    }

    /// `changedData(change:view:)` around a view already encoded by `encoded(_:)`.
    public static func changedData(change: String, encodedView: [UInt8]) -> [UInt8] {
        var writer = JSONWriter(capacity: encodedView.count + change.utf8.count + 24)
        writeChangedData(change: change, encodedView: encodedView, to: &writer)
        return writer.bytes
    }

    /// `{"change": <change>, "order": <view>}` written into a message being built.
    static func writeChangedData(change: String, encodedView: [UInt8], to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("change")
        writer.write(string: change)
        writer.key("order")
        writer.write(encoded: encodedView)
        writer.endObject()
    }

    public static func write(_ view: OrderView, to writer: inout JSONWriter) {
        writer.beginObject()
        if let at = view.autoConfirmAt {
            writer.key("auto_confirm_at")
            writer.write(integer: at.rawValue)
        }
        writer.key("campus")
        writer.write(string: view.campus)
        if let cancellation = view.cancellation {
            writer.key("cancellation")
            writer.beginObject()
            writer.key("cause")
            writer.write(string: cancellation.cause.rawValue)
            writer.key("fee")
            writer.write(integer: cancellation.fee)
            if let reason = cancellation.reason {
                writer.key("reason")
                writer.write(string: reason)
            }
            writer.endObject()
        }
        writer.key("created_at")
        writer.write(integer: view.createdAt.rawValue)
        writer.key("deadline")
        writer.write(integer: view.deadline.rawValue)
        if let code = view.deliveryCode {
            writer.key("delivery_code")
            writer.write(string: code)
        }
        writer.key("details")
        write(view.details, to: &writer)
        writer.key("id")
        writer.write(integer: Int64(view.id.rawValue))
        if view.type == .group {
            writer.key("participant_count")
            writer.write(integer: Int64(view.participantCount))
            if !view.participants.isEmpty {
                writer.key("participants")
                writer.beginArray()
                for participant in view.participants {
                    writer.separate()
                    writer.write(integer: Int64(participant.rawValue))
                }
                writer.endArray()
            }
        }
        writer.key("publisher")
        writer.write(integer: Int64(view.publisher.rawValue))
        if let rating = view.ratingByPublisher {
            writer.key("rating_by_publisher")
            write(rating, to: &writer)
        }
        if let rating = view.ratingByRunner {
            writer.key("rating_by_runner")
            write(rating, to: &writer)
        }
        writer.key("revision")
        writer.write(integer: Int64(view.revision))
        if let runner = view.runner {
            writer.key("runner")
            writer.write(integer: Int64(runner.rawValue))
        }
        writer.key("status")
        writer.write(string: view.status.rawValue)
        writer.key("timeline")
        writer.beginArray()
        for entry in view.timeline {
            writer.separate()
            write(entry, to: &writer)
        }
        writer.endArray()
        writer.key("tip")
        writer.write(integer: view.tip)
        writer.key("type")
        writer.write(string: view.type.rawValue)
        writer.endObject()
    }

    static func write(_ entry: TimelineEntry, to writer: inout JSONWriter) {
        writer.beginObject()
        if let actor = entry.actor {
            writer.key("actor")
            writer.write(integer: Int64(actor.rawValue))
        }
        writer.key("at")
        writer.write(integer: entry.at.rawValue)
        if let note = entry.note {
            writer.key("note")
            writer.write(string: note)
        }
        writer.key("status")
        writer.write(string: entry.status.rawValue)
        writer.endObject()
    }

    static func write(_ rating: Rating, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("at")
        writer.write(integer: rating.at.rawValue)
        writer.key("comment")
        writer.write(string: rating.comment)
        writer.key("stars")
        writer.write(integer: Int64(rating.stars))
        writer.endObject()
    }

    static func write(_ details: OrderDetails, to writer: inout JSONWriter) {
        func put(_ key: StaticString, _ value: String?) {
            guard let value else { return }
            writer.key(key)
            writer.write(string: value)
        }
        writer.beginObject()
        switch details {
        case .express(let express):
            put("contact_phone", express.contactPhone)
            put("drop_off_place", express.dropOffPlace)
            put("drop_off_room", express.dropOffRoom)
            put("parcel_size", express.parcelSize.rawValue)
            put("pickup_code", express.pickupCode)
            put("pickup_station", express.pickupStation)
        case .purchase(let purchase):
            put("drop_off_place", purchase.dropOffPlace)
            put("drop_off_room", purchase.dropOffRoom)
            writer.key("goods_budget")
            writer.write(integer: purchase.goodsBudget)
            writer.key("items")
            writer.beginArray()
            for item in purchase.items {
                writer.separate()
                writer.beginObject()
                writer.key("name")
                writer.write(string: item.name)
                if let note = item.note {
                    writer.key("note")
                    writer.write(string: note)
                }
                writer.key("qty")
                writer.write(integer: Int64(item.quantity))
                writer.endObject()
            }
            writer.endArray()
            put("store", purchase.store)
        case .bounty(let bounty):
            put("description", bounty.description)
            put("place", bounty.place)
            put("title", bounty.title)
        case .group(let group):
            writer.key("capacity")
            writer.write(integer: Int64(group.capacity))
            writer.key("closes_at")
            writer.write(integer: group.closesAt.rawValue)
            put("kind", group.kind.rawValue)
            if let minimum = group.minimumFill {
                writer.key("minimum_fill")
                writer.write(integer: Int64(minimum))
            }
            writer.key("price_per_share")
            writer.write(integer: group.pricePerShare)
            put("subject", group.subject)
        }
        writer.endObject()
    }
}
