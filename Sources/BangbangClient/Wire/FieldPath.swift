// The path of a field inside a request, as the server names it in `invalid_field` errors
// ("details.items[2].qty"), kept as components so an app can point at the form field without
// parsing strings itself.

/// Where a field sits in a request's `data`: `details.items[2].qty` is
/// `[.key("details"), .key("items"), .index(2), .key("qty")]`.
public struct FieldPath: Hashable, Sendable, CustomStringConvertible, ExpressibleByArrayLiteral {
    public enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    public var components: [Component]

    public init(_ components: [Component]) { self.components = components }

    public init(arrayLiteral elements: Component...) { components = elements }

    /// Reads the server's dotted form. Text that does not follow it (an unclosed bracket, a
    /// bracket without digits) is kept as a key, never refused: the path is for pointing, and a
    /// server may name a field in a way this version does not know.
    public init(parsing text: String) {
        var components: [Component] = []
        var key = ""
        var rest = Substring(text)
        func endKey() {
            if !key.isEmpty { components.append(.key(key)) }
            key = ""
        }
        while let character = rest.first {
            if character == "." {
                endKey()
                rest = rest.dropFirst()
            } else if character == "[", let close = rest.firstIndex(of: "]"),
                      let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0 {
                endKey()
                components.append(.index(index))
                rest = rest[rest.index(after: close)...]
            } else {
                key.append(character)
                rest = rest.dropFirst()
            }
        }
        endKey()
        self.components = components
    }

    public var isEmpty: Bool { components.isEmpty }

    /// The path one level down.
    public func appending(_ component: Component) -> FieldPath { FieldPath(components + [component]) }

    /// The dotted form the server uses.
    public var description: String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : ".\(key)"
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }
}

extension FieldPath.Component: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public init(stringLiteral value: String) { self = .key(value) }
    public init(integerLiteral value: Int) { self = .index(value) }
}
