// Sessions (logged-in devices) and feedback on the wire (protocol/operations-accounts.md).
import BangbangCore

public enum SessionWire {
    /// One logged-in device. `isCurrent` marks the session of the connection asking.
    public static func encode(_ session: Session, isCurrent: Bool) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(session.id.description),
            "issued_at": .integer(session.issuedAt.rawValue),
            "expires_at": .integer(session.expiresAt.rawValue),
            "is_current": .bool(isCurrent),
        ]
        if let device = session.device { object["device"] = .string(device) }
        return .object(object)
    }

    /// Reads a session id as `encode` writes it: exactly 32 hexadecimal digits (either case).
    public static func decodeID(_ text: String, field: String = "session_id") throws(DomainError) -> SessionID {
        let digits = Array(text.utf8)
        guard digits.count == 32 else {
            throw DomainError(.invalidField, "\(field) must be 32 hexadecimal digits", field: field)
        }
        var high: UInt64 = 0
        var low: UInt64 = 0
        for (index, digit) in digits.enumerated() {
            let value: UInt8
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): value = digit - UInt8(ascii: "A") + 10
            default: throw DomainError(.invalidField, "\(field) must be 32 hexadecimal digits", field: field)
            }
            if index < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
        }
        return SessionID(high: high, low: low)
    }
}

public enum FeedbackWire {
    public static func encode(_ entry: FeedbackEntry) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .integer(Int64(entry.id)),
            "user_id": .integer(Int64(entry.user.rawValue)),
            "text": .string(entry.text),
            "submitted_at": .integer(entry.submittedAt.rawValue),
        ]
        if let contact = entry.contact { object["contact"] = .string(contact) }
        return .object(object)
    }

    public static func encode(_ page: FeedbackPage) -> JSONValue {
        var object: [String: JSONValue] = ["feedback": .array(page.entries.map(encode))]
        if let next = page.nextBefore { object["next_before"] = .integer(Int64(next)) }
        return .object(object)
    }
}
