/// One field line as received: the name keeps its spelling, the value has its surrounding
/// whitespace removed (RFC 9112 §5).
public struct HTTPField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// Header fields in the order received, with the lookups a handshake needs: names compare
/// case-insensitively (RFC 9110 §5.1) and repeated fields combine into one comma-separated
/// list (RFC 9110 §5.3). Lookups are linear scans; a head holds at most
/// `HTTPParserLimits.maximumHeaderCount` fields, so an index would cost more than it saves.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [HTTPField]

    /// Fields with the same checks as `append(name:value:)`.
    public init(_ fields: [HTTPField] = []) {
        self.fields = []
        self.fields.reserveCapacity(fields.count)
        for field in fields { append(name: field.name, value: field.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.fields = []
        for (name, value) in elements { append(name: name, value: value) }
    }

    /// For the parsers, whose grammar already guarantees what `append` checks.
    init(validated fields: [HTTPField]) {
        self.fields = fields
    }

    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[HTTPField]> { fields.makeIterator() }

    /// Appends a field. Names must be tokens and values must not contain CR, LF or NUL: a
    /// violation would let one header smuggle another onto the wire, so it is caller misuse.
    public mutating func append(name: String, value: String) {
        precondition(HTTPSyntax.isToken(name), "header name must be an RFC 9110 token")
        precondition(!value.utf8.contains { $0 == ASCII.carriageReturn || $0 == ASCII.lineFeed || $0 == 0 },
                     "header value must not contain CR, LF or NUL")
        fields.append(HTTPField(name: name, value: value))
    }

    /// Removes every field with this name (case-insensitive).
    public mutating func removeAll(named name: String) {
        fields.removeAll { HTTPSyntax.equalsIgnoringCase($0.name, name) }
    }

    /// Replaces every field with this name by a single one.
    public mutating func replaceOrAppend(name: String, value: String) {
        removeAll(named: name)
        append(name: name, value: value)
    }

    /// Every value of the fields with this name, in order.
    public func values(named name: String) -> [String] {
        fields.lazy.filter { HTTPSyntax.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The first value for this name, if any. Use `combinedValue(named:)` for list-valued fields.
    public subscript(name: String) -> String? {
        fields.first { HTTPSyntax.equalsIgnoringCase($0.name, name) }?.value
    }

    /// The values of all fields with this name joined by ", ", which RFC 9110 §5.3 makes
    /// equivalent to the separate lines; nil when the field is absent.
    public func combinedValue(named name: String) -> String? {
        let all = values(named: name)
        return all.isEmpty ? nil : all.joined(separator: ", ")
    }

    public func contains(name: String) -> Bool {
        self[name] != nil
    }

    /// The elements of a comma-separated list field (RFC 9110 §5.6.1) over all fields with this
    /// name, whitespace-trimmed, with empty elements dropped as the list rule requires.
    public func listElements(named name: String) -> [Substring] {
        var result: [Substring] = []
        for value in values(named: name) {
            for element in value.split(separator: ",", omittingEmptySubsequences: false) {
                let trimmed = HTTPSyntax.trimmingWhitespace(element)
                if !trimmed.isEmpty { result.append(trimmed) }
            }
        }
        return result
    }

    /// Whether a token-list field such as `Connection: keep-alive, Upgrade` holds `token`,
    /// compared case-insensitively as tokens are.
    public func containsToken(_ token: String, named name: String) -> Bool {
        listElements(named: name).contains { HTTPSyntax.equalsIgnoringCase($0, token) }
    }
}
