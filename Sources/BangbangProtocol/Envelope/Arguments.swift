// Typed access to a request's `data` object, so each operation reads its fields in one line and
// every missing field, wrong type or out-of-range value becomes the same clear `invalid_field`
// error naming the field. Unknown fields are refused too: a typo in a field name must not be
// silently ignored (a client that sends `tips` instead of `tip` would publish a free order).
import BangbangCore

public struct Arguments: Sendable {
    public let members: [String: JSONValue]
    private let prefix: String

    public init(_ value: JSONValue?, prefix: String = "") throws(DomainError) {
        switch value {
        case nil, .null?: members = [:]
        case .object(let members)?: self.members = members
        case let other?:
            throw DomainError(.invalidField, "\(prefix.isEmpty ? "data" : prefix) must be an object, got \(other.typeName)",
                              field: prefix.isEmpty ? "data" : prefix)
        }
        self.prefix = prefix
    }

    private func path(_ key: String) -> String { prefix.isEmpty ? key : "\(prefix).\(key)" }

    private func invalid(_ key: String, _ message: String, minimum: Int64? = nil, maximum: Int64? = nil) -> DomainError {
        DomainError(.invalidField, "\(path(key)) \(message)", field: path(key), minimum: minimum, maximum: maximum)
    }

    /// Refuses any member not in `allowed`: a handful of names, compared one by one (an array
    /// literal costs nothing to pass, where a set was built and hashed on every request).
    public func allowOnly(_ allowed: [String]) throws(DomainError) {
        guard members.keys.contains(where: { !allowed.contains($0) }) else { return }
        try refuseFirstUnknown { allowed.contains($0) }
    }

    /// Refuses any member not in `allowed`.
    public func allowOnly(_ allowed: Set<String>) throws(DomainError) {
        guard members.keys.contains(where: { !allowed.contains($0) }) else { return }
        try refuseFirstUnknown { allowed.contains($0) }
    }

    private func refuseFirstUnknown(_ isAllowed: (String) -> Bool) throws(DomainError) {
        // Sorted only to name the same field every time when there are several.
        if let unknown = members.keys.sorted().first(where: { !isAllowed($0) }) {
            throw DomainError(.invalidField, "unknown field \(path(unknown))", field: path(unknown))
        }
    }

    public func has(_ key: String) -> Bool {
        present(key) != nil
    }

    /// The member named `key` unless it is absent or null. The optional readers look a member
    /// up once and read it from here.
    private func present(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    public func string(_ key: String, maxLength: Int = 1000) throws(DomainError) -> String {
        guard let value = present(key) else { throw invalid(key, "is required") }
        return try string(key, value, maxLength: maxLength)
    }

    public func optionalString(_ key: String, maxLength: Int = 1000) throws(DomainError) -> String? {
        guard let value = present(key) else { return nil }
        return try string(key, value, maxLength: maxLength)
    }

    private func string(_ key: String, _ value: JSONValue, maxLength: Int) throws(DomainError) -> String {
        guard case .string(let text) = value else { throw invalid(key, "must be a string, got \(value.typeName)") }
        guard text.hasAtMost(characters: maxLength) else {
            throw invalid(key, "is longer than \(maxLength) characters", maximum: Int64(maxLength))
        }
        return text
    }

    public func integer(_ key: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(DomainError) -> Int64 {
        guard let value = present(key) else { throw invalid(key, "is required") }
        return try integer(key, value, in: range)
    }

    public func optionalInteger(_ key: String, in range: ClosedRange<Int64> = Int64.min...Int64.max) throws(DomainError) -> Int64? {
        guard let value = present(key) else { return nil }
        return try integer(key, value, in: range)
    }

    private func integer(_ key: String, _ value: JSONValue, in range: ClosedRange<Int64>) throws(DomainError) -> Int64 {
        guard case .integer(let number) = value else {
            throw invalid(key, "must be an integer, got \(value.typeName)")
        }
        guard range.contains(number) else {
            throw invalid(key, "must be between \(range.lowerBound) and \(range.upperBound)",
                          minimum: range.lowerBound, maximum: range.upperBound)
        }
        return number
    }

    public func bool(_ key: String) throws(DomainError) -> Bool {
        guard let value = present(key) else { throw invalid(key, "is required") }
        return try bool(key, value)
    }

    public func optionalBool(_ key: String) throws(DomainError) -> Bool? {
        guard let value = present(key) else { return nil }
        return try bool(key, value)
    }

    private func bool(_ key: String, _ value: JSONValue) throws(DomainError) -> Bool {
        guard case .bool(let flag) = value else { throw invalid(key, "must be a boolean, got \(value.typeName)") }
        return flag
    }

    /// A string that must be one of the raw values of `T` (an enum on the wire).
    public func choice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type) throws(DomainError) -> T
    where T.RawValue == String {
        let text = try string(key, maxLength: 64)
        guard let value = T(rawValue: text) else {
            let allowed = T.allCases.map(\.rawValue).joined(separator: ", ")
            throw invalid(key, "must be one of: \(allowed)")
        }
        return value
    }

    public func optionalChoice<T: RawRepresentable & CaseIterable>(_ key: String, as type: T.Type) throws(DomainError) -> T?
    where T.RawValue == String {
        has(key) ? try choice(key, as: type) : nil
    }

    public func object(_ key: String) throws(DomainError) -> Arguments {
        guard has(key) else { throw invalid(key, "is required") }
        return try Arguments(members[key], prefix: path(key))
    }

    public func optionalObject(_ key: String) throws(DomainError) -> Arguments? {
        has(key) ? try object(key) : nil
    }

    public func array(_ key: String, maxCount: Int) throws(DomainError) -> [JSONValue] {
        guard let value = members[key], value != .null else { throw invalid(key, "is required") }
        guard case .array(let elements) = value else { throw invalid(key, "must be an array, got \(value.typeName)") }
        guard elements.count <= maxCount else { throw invalid(key, "has more than \(maxCount) elements", maximum: Int64(maxCount)) }
        return elements
    }

    /// The elements of an array of objects, each wrapped so its errors name `key[index].field`.
    public func objects(_ key: String, maxCount: Int) throws(DomainError) -> [Arguments] {
        var result: [Arguments] = []
        for (index, element) in try array(key, maxCount: maxCount).enumerated() {
            result.append(try Arguments(element, prefix: "\(path(key))[\(index)]"))
        }
        return result
    }

    public func strings(_ key: String, maxCount: Int, maxLength: Int = 64) throws(DomainError) -> [String] {
        var result: [String] = []
        for (index, element) in try array(key, maxCount: maxCount).enumerated() {
            let field = "\(path(key))[\(index)]"
            guard case .string(let text) = element else {
                throw DomainError(.invalidField, "\(field) must be a string, got \(element.typeName)", field: field)
            }
            guard text.hasAtMost(characters: maxLength) else {
                throw DomainError(.invalidField, "\(field) is longer than \(maxLength) characters", field: field,
                                  maximum: Int64(maxLength))
            }
            result.append(text)
        }
        return result
    }
}
