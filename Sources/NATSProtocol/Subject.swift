// Subject syntax (https://docs.nats.io/nats-concepts/subjects): dot-separated tokens of
// printable characters, `*` matching one token and `>` the rest, in subscriptions only.
// Publish subjects never contain `*` or `>` at all.

public enum Subject {
    /// A subject one can publish to: no wildcards.
    public static func isValidForPublish(_ subject: String) -> Bool {
        validate(subject, allowsWildcards: false)
    }

    /// A subject one can subscribe to: `*` as any token, `>` as the last.
    public static func isValidForSubscribe(_ subject: String) -> Bool {
        validate(subject, allowsWildcards: true)
    }

    /// A queue group name: one non-empty run of printable characters.
    public static func isValidQueueGroup(_ group: String) -> Bool {
        !group.isEmpty && group.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F }
    }

    /// True when `subject` (without wildcards) matches `pattern` (with them).
    public static func matches(_ subject: String, pattern: String) -> Bool {
        var subjectTokens = subject.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)[...]
        for token in pattern.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
            if token.elementsEqual(">".utf8) { return !subjectTokens.isEmpty }
            guard let next = subjectTokens.popFirst() else { return false }
            if !token.elementsEqual("*".utf8), !token.elementsEqual(next) { return false }
        }
        return subjectTokens.isEmpty
    }

    private static func validate(_ subject: String, allowsWildcards: Bool) -> Bool {
        guard !subject.isEmpty else { return false }
        var tokenLength = 0
        var tokenIsWildcard = false
        var sawFullWildcard = false
        for byte in subject.utf8 {
            if sawFullWildcard { return false }
            switch byte {
            case UInt8(ascii: "."):
                guard tokenLength > 0 else { return false }
                tokenLength = 0
                tokenIsWildcard = false
            case 0...0x20, 0x7F:
                return false
            case UInt8(ascii: "*"), UInt8(ascii: ">"):
                // Stricter than the server, which reads `b*` as a literal token: a wildcard
                // character anywhere but alone in its token is refused, so no subject built
                // from data can look like a pattern.
                guard allowsWildcards, tokenLength == 0 else { return false }
                tokenIsWildcard = true
                if byte == UInt8(ascii: ">") { sawFullWildcard = true }
                tokenLength += 1
            default:
                if tokenIsWildcard { return false }
                tokenLength += 1
            }
        }
        return tokenLength > 0
    }
}
