// Human-readable output for `bangbang admin`: a reply's lists become tables (one column per
// flattened field, `verification.status` style), everything else `key: value` lines. `--json`
// prints the reply itself instead, for scripts.
import BangbangApplication
import BangbangProtocol

enum AdminOutput {
    static func render(_ value: JSONValue) -> String {
        guard case .object(let members) = value else { return scalar(value) }
        var sections: [String] = []
        var lines: [(String, String)] = []
        for key in members.keys.sorted() {
            let member = members[key]!
            if case .array(let items) = member, items.contains(where: { if case .object = $0 { true } else { false } }) {
                sections.append("\(key) (\(items.count)):\n" + table(items))
            } else if member == .array([]) || member == .object([:]) {
                sections.append("\(key): none")
            } else {
                lines += flatten(member, prefix: key)
            }
        }
        let width = lines.map(\.0.count).max() ?? 0
        let keyValues = lines.map { $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }
        return (keyValues + sections).joined(separator: "\n")
    }

    static func table(_ rows: [JSONValue]) -> String {
        let flattened = rows.map { Dictionary(flatten($0, prefix: ""), uniquingKeysWith: { first, _ in first }) }
        var columns: [String] = []
        for row in rows {
            for (key, _) in flatten(row, prefix: "") where !columns.contains(key) { columns.append(key) }
        }
        let widths = columns.map { column in
            max(column.count, flattened.map { min(48, ($0[column] ?? "").count) }.max() ?? 0)
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { cell, width in
                let clipped = cell.count > width ? String(cell.prefix(width - 1)) + "…" : cell
                return clipped.padding(toLength: width, withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        var out = [line(columns.map { $0.uppercased() })]
        for row in flattened { out.append(line(columns.map { row[$0] ?? "" })) }
        return out.joined(separator: "\n")
    }

    /// `a.b.c` → scalar text, for nested objects; arrays of scalars are joined with commas.
    static func flatten(_ value: JSONValue, prefix: String) -> [(String, String)] {
        switch value {
        case .object(let members):
            return members.keys.sorted().flatMap { key in
                flatten(members[key]!, prefix: prefix.isEmpty ? key : "\(prefix).\(key)")
            }
        case .array(let items) where items.allSatisfy({ if case .object = $0 { false } else if case .array = $0 { false } else { true } }):
            return [(prefix, items.map(scalar).joined(separator: ","))]
        case .array(let items):
            return [(prefix, "\(items.count) items")]
        default:
            return [(prefix, scalar(value))]
        }
    }

    static func scalar(_ value: JSONValue) -> String {
        switch value {
        case .null: "-"
        case .bool(let flag): flag ? "yes" : "no"
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .string(let text): text.replacingOccurrences(of: "\n", with: " ")
        case .array, .object: JSONWriter.string(value)
        }
    }
}
