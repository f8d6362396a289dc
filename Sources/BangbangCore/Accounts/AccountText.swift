// Validation of free text typed by users: trimmed, length counted in Characters (what a user
// sees as one letter or one 汉字), control characters refused.

enum AccountText {
    /// Trims surrounding whitespace and checks the length in Characters and the absence of
    /// control characters (newlines only where `allowsNewlines`). Returns the trimmed text.
    static func validated(_ value: String, field: String, label: String, length: ClosedRange<Int>,
                          allowsNewlines: Bool = false) throws(DomainError) -> String {
        // Refuse absurd input before walking its Characters: a Character has at least one byte,
        // but may have many, so only a very generous byte cap is safe here.
        guard value.utf8.count <= length.upperBound * 64 + 64 else {
            throw DomainError(.invalidField, "\(label) is too long (at most \(length.upperBound) characters).",
                              field: field, maximum: Int64(length.upperBound))
        }
        let trimmed = trim(value)
        let count = trimmed.count
        if count < length.lowerBound {
            throw DomainError(.invalidField, length.lowerBound == 1 ? "\(label) must not be empty."
                              : "\(label) is too short (at least \(length.lowerBound) characters).", field: field,
                              minimum: Int64(length.lowerBound))
        }
        if count > length.upperBound {
            throw DomainError(.invalidField, "\(label) is too long (at most \(length.upperBound) characters).",
                              field: field, maximum: Int64(length.upperBound))
        }
        if containsControlCharacters(trimmed, allowingNewlines: allowsNewlines) {
            throw DomainError(.invalidField, "\(label) contains characters that cannot be shown.", field: field)
        }
        return trimmed
    }

    static func containsControlCharacters(_ value: String, allowingNewlines: Bool) -> Bool {
        for scalar in value.unicodeScalars {
            if allowingNewlines && scalar == "\n" { continue }
            switch scalar.properties.generalCategory {
            case .control, .lineSeparator, .paragraphSeparator: return true
            default: continue
            }
        }
        return false
    }

    static func trim(_ value: String) -> String {
        guard let first = value.firstIndex(where: { !$0.isWhitespace }),
              let last = value.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(value[first...last])
    }
}
