// Reading JetStream's JSON answers: typed fields out of `JSONValue`, absent fields as defaults.
import JSON

extension JSONValue {
    func string(_ key: String) -> String? {
        if case .string(let text)? = self[key] { return text }
        return nil
    }

    func integer(_ key: String) -> Int64? {
        switch self[key] {
        case .integer(let value)?: value
        case .double(let value)? where value.rounded() == value && abs(value) < 9e18: Int64(value)
        default: nil
        }
    }

    func unsigned(_ key: String) -> UInt64 {
        guard let value = integer(key), value > 0 else { return 0 }
        return UInt64(value)
    }

    func bool(_ key: String) -> Bool {
        self[key] == .bool(true)
    }

    func strings(_ key: String) -> [String] {
        guard case .array(let items)? = self[key] else { return [] }
        return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }
}

/// Builds request bodies: `JSONValue` objects written by BangbangProtocol's writer.
enum JSONBody {
    static func encode(_ members: [String: JSONValue]) -> [UInt8] {
        JSONWriter.encode(.object(members))
    }
}
