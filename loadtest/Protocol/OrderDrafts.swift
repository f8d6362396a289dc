// Orders the driver publishes: a valid draft of each of the four types (protocol/orders.md),
// with a caller-chosen text in a field every board viewer sees, which is where the feed
// scenario puts the publish time.
import BangbangProtocol
import Glibc

enum OrderDrafts {
    static let types = ["express", "purchase", "bounty", "group"]

    /// Wall-clock milliseconds since the Unix epoch, the protocol's time unit.
    static func nowMilliseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// A draft of `type` on `campus` whose public text field (shown on the board) is `text`. An
    /// hour to the deadline, so nothing expires during a run.
    static func draft(type: String, text: String, tip: Int64 = 300, campus: String = "North") -> JSONValue {
        let now = nowMilliseconds()
        let hour: Int64 = 3_600_000
        let campus = JSONValue.string(campus)
        switch type {
        case "express":
            return ["type": "express", "campus": campus, "deadline": .integer(now + hour), "tip": .integer(tip),
                    "details": ["pickup_station": .string(text), "pickup_code": "8-2-1043", "parcel_size": "medium",
                                "drop_off_place": "Dorm 7", "drop_off_room": "512", "contact_phone": "+8613812345678"]]
        case "purchase":
            return ["type": "purchase", "campus": campus, "deadline": .integer(now + hour), "tip": .integer(tip),
                    "details": ["items": [["name": "Oat milk", "qty": 2]], "store": .string(text),
                                "goods_budget": 2500, "drop_off_place": "Library", "drop_off_room": "B2-14"]]
        case "bounty":
            return ["type": "bounty", "campus": campus, "deadline": .integer(now + hour), "tip": .integer(tip),
                    "details": ["title": .string(text), "description": "Black, near the gym", "place": "Gym"]]
        case "group":
            return ["type": "group", "campus": campus, "deadline": .integer(now + 2 * hour),
                    "details": ["kind": "carpool", "subject": .string(text), "closes_at": .integer(now + hour),
                                "capacity": 2, "price_per_share": 3000]]
        default:
            preconditionFailure("unknown order type \(type)")
        }
    }

    /// The public text field of an order as the board shows it.
    static func text(of order: JSONValue) -> String? {
        guard let details = order["details"] else { return nil }
        for key in ["pickup_station", "store", "title", "subject"] {
            if case .string(let text)? = details[key] { return text }
        }
        return nil
    }
}
