// The JSON examples of protocol/*.md, extracted the way a reader sees them: every ```json block,
// one message per block or one per line, with the operation whose section (### `op`) it sits
// in. Placeholders the text uses for brevity (ORDER, {…}) are filled by the table in `fill`,
// so every example is decoded in full.
import BangbangProtocol
import Foundation

struct ProtocolExample: CustomStringConvertible {
    var file: String
    /// The operation of the section the block is in (`### \`order.accept\``), if any.
    var section: String?
    var message: JSONValue
    var text: String

    var description: String { "\(file) [\(section ?? "-")]: \(text.prefix(120))" }
}

enum ProtocolExamples {
    static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    static var protocolDirectory: URL { packageRoot.appendingPathComponent("protocol") }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Every example of every protocol/*.md, in file order.
    static func all() throws -> [ProtocolExample] {
        let files = try FileManager.default.contentsOfDirectory(atPath: protocolDirectory.path)
            .filter { $0.hasSuffix(".md") }.sorted()
        var examples: [ProtocolExample] = []
        for file in files {
            let text = try String(contentsOf: protocolDirectory.appendingPathComponent(file), encoding: .utf8)
            examples += try extract(from: text, file: file)
        }
        return examples
    }

    static func extract(from markdown: String, file: String) throws -> [ProtocolExample] {
        var examples: [ProtocolExample] = []
        var section: String?
        var block: [String]?
        for line in markdown.components(separatedBy: "\n") {
            if block == nil, line.hasPrefix("#") {
                section = operationName(inHeading: line)
            } else if block == nil, line.trimmingCharacters(in: .whitespaces) == "```json" {
                block = []
            } else if var lines = block {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    examples += try messages(in: lines.joined(separator: "\n"), file: file, section: section)
                    block = nil
                } else {
                    lines.append(line)
                    block = lines
                }
            }
        }
        return examples
    }

    /// `### \`order.accept\`` and `### \`auth.resume\` — log a new connection in` name an operation.
    static func operationName(inHeading line: String) -> String? {
        guard let open = line.firstIndex(of: "`") else { return nil }
        let rest = line[line.index(after: open)...]
        guard let close = rest.firstIndex(of: "`") else { return nil }
        let name = String(rest[..<close])
        return name.contains(".") && !name.contains(" ") ? name : nil
    }

    private static func messages(in block: String, file: String, section: String?) throws -> [ProtocolExample] {
        if let whole = try? parse(block) {
            return [ProtocolExample(file: file, section: section, message: whole, text: block)]
        }
        // Several messages, each on one line or spread over several: lines are gathered until
        // what is gathered parses.
        var found: [ProtocolExample] = []
        var pending: [String] = []
        for line in block.components(separatedBy: "\n") where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            pending.append(line)
            let text = pending.joined(separator: "\n")
            if let message = try? parse(text) {
                found.append(ProtocolExample(file: file, section: section, message: message, text: text))
                pending = []
            }
        }
        guard pending.isEmpty else {
            let text = pending.joined(separator: "\n")
            do { _ = try parse(text) } catch {
                throw Failure(description: "\(file): an example that is not JSON even with its placeholders filled: \(text) (\(error))")
            }
            return found
        }
        return found
    }

    private static let hole = "@placeholder@"

    private static func parse(_ text: String) throws -> JSONValue {
        let marked = text.replacingOccurrences(of: "{…}", with: "\"\(hole)\"")
            .replacingOccurrences(of: "ORDER", with: "\"\(hole)\"")
        let value = try JSONParser.parse(marked)
        return try fill(value, key: nil, siblings: [:], message: value)
    }

    /// What each placeholder stands for, by the member that holds it.
    private static func fill(_ value: JSONValue, key: String?, siblings: [String: JSONValue],
                             message: JSONValue) throws -> JSONValue {
        switch value {
        case .string(let text) where text == hole:
            switch key {
            case "order":
                return sampleOrder
            case "data" where message["event"] == .string("order.changed"):
                return ["order": sampleOrder, "change": "accepted"]
            case "data" where message["event"] != nil:
                return ["order": sampleOrder]
            default:
                // "purchase": {…} next to a spelled-out "express": {…}: the same shape.
                if let model = siblings.values.first(where: { !containsHole($0) }) { return model }
                throw Failure(description: "a placeholder at '\(key ?? "?")' the example table does not know")
            }
        case .object(let members):
            var filled: [String: JSONValue] = [:]
            for (name, member) in members {
                filled[name] = try fill(member, key: name, siblings: members, message: message)
            }
            return .object(filled)
        case .array(let elements):
            return .array(try elements.map { try fill($0, key: key, siblings: [:], message: message) })
        default:
            return value
        }
    }

    private static func containsHole(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let text): text == hole
        case .object(let members): members.values.contains(where: containsHole)
        case .array(let elements): elements.contains(where: containsHole)
        default: false
        }
    }

    /// An express order as its publisher sees it, every optional member present.
    static let sampleOrder: JSONValue = [
        "id": 4097, "type": "express", "status": "delivered", "publisher": 1, "runner": 2, "campus": "North",
        "created_at": 1_796_099_188_971, "deadline": 1_796_102_788_971, "tip": 300, "delivery_code": "0427",
        "details": ["pickup_station": "Cainiao station 3", "pickup_code": "8-2-1043", "parcel_size": "medium",
                    "drop_off_place": "Dorm 7", "drop_off_room": "512", "contact_phone": "+8613812345678"],
        "timeline": [["status": "open", "at": 1_796_099_188_971, "actor": 1],
                     ["status": "accepted", "at": 1_796_099_188_979, "actor": 2],
                     ["status": "picked_up", "at": 1_796_099_188_987, "actor": 2, "note": "at the gate"],
                     ["status": "delivered", "at": 1_796_099_188_995, "actor": 2]],
        "auto_confirm_at": 1_796_185_588_995, "revision": 4,
    ]
}
