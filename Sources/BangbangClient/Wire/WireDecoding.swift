// Reading the server's JSON into the library's types.
//
// Every type the server sends has an `init(wire:at:)` that reads one JSON value, member by
// member, with the path of each member, so a reply the library cannot read names the exact place
// (`order.timeline[3].at: expected an integer, got string`). Members this version does not know
// are skipped, so an app keeps working when the server adds a field; they are reported to the
// task's `WireContext.current` when one is set, which is how the tests prove that every member the
// protocol documents has a home in these types.
import JSON

/// A reply or event the library could not read.
public struct DecodingFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: FieldPath
    public var message: String

    public init(path: FieldPath, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

/// Collects the members skipped while decoding. Set as the task-local `WireContext.current` for
/// a strict decode (the tests); without it unknown members are skipped silently.
public final class WireContext: @unchecked Sendable {
    // Confinement: filled by the one task that set it, read after that task's decode returns.
    public private(set) var unknownMembers: [FieldPath] = []

    public init() {}

    @TaskLocal public static var current: WireContext?

    func noteUnknown(_ path: FieldPath) { unknownMembers.append(path) }
}

/// A value that can be read from the server's JSON.
protocol WireDecodable {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure)
}

/// One JSON object being read: each member read is remembered, and `finish()` reports the rest.
struct WireObject {
    let members: [String: JSONValue]
    let path: FieldPath
    private var read: Set<String> = []

    init(_ value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        guard case .object(let members) = value else {
            throw DecodingFailure(path: path, message: "expected an object, got \(value.typeName)")
        }
        self.members = members
        self.path = path
    }

    /// A member that must be there.
    mutating func required<Value: WireDecodable>(_ key: String, as type: Value.Type = Value.self) throws(DecodingFailure) -> Value {
        read.insert(key)
        guard let value = members[key], value != .null else {
            throw DecodingFailure(path: path.appending(.key(key)), message: "missing")
        }
        return try Value(wire: value, at: path.appending(.key(key)))
    }

    /// A member that may be absent; `null` reads as absent.
    mutating func optional<Value: WireDecodable>(_ key: String, as type: Value.Type = Value.self) throws(DecodingFailure) -> Value? {
        read.insert(key)
        guard let value = members[key], value != .null else { return nil }
        return try Value(wire: value, at: path.appending(.key(key)))
    }

    /// The raw member, marked as read.
    mutating func raw(_ key: String) -> JSONValue? {
        read.insert(key)
        return members[key]
    }

    /// Reports members nobody read to the current strict context, if any.
    func finish() {
        guard let context = WireContext.current else { return }
        for key in members.keys.sorted() where !read.contains(key) {
            context.noteUnknown(path.appending(.key(key)))
        }
    }
}

extension String: WireDecodable {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        guard case .string(let text) = value else {
            throw DecodingFailure(path: path, message: "expected a string, got \(value.typeName)")
        }
        self = text
    }
}

extension Bool: WireDecodable {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        guard case .bool(let flag) = value else {
            throw DecodingFailure(path: path, message: "expected a boolean, got \(value.typeName)")
        }
        self = flag
    }
}

extension Int64: WireDecodable {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        guard case .integer(let number) = value else {
            throw DecodingFailure(path: path, message: "expected an integer, got \(value.typeName)")
        }
        self = number
    }
}

extension Int: WireDecodable {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        self = Int(try Int64(wire: value, at: path))
    }
}

extension Array: WireDecodable where Element: WireDecodable {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        guard case .array(let elements) = value else {
            throw DecodingFailure(path: path, message: "expected an array, got \(value.typeName)")
        }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            result.append(try Element(wire: element, at: path.appending(.index(index))))
        }
        self = result
    }
}

/// A string enumeration of the protocol (`"express"`, `"picked_up"`): decoded by raw value, with
/// an error that lists what was expected.
protocol WireEnumeration: WireDecodable, RawRepresentable, CaseIterable where RawValue == String {}

extension WireEnumeration {
    init(wire value: JSONValue, at path: FieldPath) throws(DecodingFailure) {
        let text = try String(wire: value, at: path)
        guard let decoded = Self(rawValue: text) else {
            let expected = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw DecodingFailure(path: path, message: "unknown value '\(text)' (expected one of \(expected))")
        }
        self = decoded
    }

    var wireValue: JSONValue { .string(rawValue) }
}

/// Builds a request's `data` object, leaving out members that are nil.
struct WireObjectBuilder {
    private(set) var members: [String: JSONValue] = [:]

    subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    var value: JSONValue { .object(members) }
}
