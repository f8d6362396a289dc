// Length and blankness checks of user text that count characters (grapheme clusters) only when
// the bytes cannot decide: every request runs several, and counting characters walks the
// grapheme-breaking tables for each one, while nearly all real text is decided by its UTF-8
// length or its first byte.

extension String {
    /// Whether the text has at most `limit` characters. A character is at least one UTF-8 byte,
    /// so a text of at most `limit` bytes needs no counting.
    public func hasAtMost(characters limit: Int) -> Bool {
        utf8.count <= limit || count <= limit
    }

    /// Whether some character is not whitespace. A printable ASCII first byte starts a first
    /// character that is not whitespace (whitespace is decided by a character's first scalar).
    public var hasNonWhitespace: Bool {
        if let first = utf8.first, (0x21...0x7E).contains(first) { return true }
        return contains { !$0.isWhitespace }
    }
}
