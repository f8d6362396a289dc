/// An incremental UTF-8 validator (RFC 3629 §4 grammar), fed a message piece by piece.
///
/// The state records what the next byte must be, so a code point split across fragments is
/// checked exactly as if it were contiguous, and an invalid byte is reported by the call that
/// delivers it, not at the end of the message. The grammar excludes overlong forms (C0, C1,
/// E0 80–9F, F0 80–8F), surrogates (ED A0–BF), code points above U+10FFFF (F4 90–BF, F5–FF)
/// and the old 5/6-byte forms. `isComplete` catches a message that ends mid-sequence.
///
/// Runs of ASCII are skipped eight bytes at a time, which is the common case for JSON text.
public struct UTF8Validator: Sendable, Hashable {
    @usableFromInline
    enum Expectation: UInt8, Sendable {
        case boundary          // between code points
        case tail1             // one more 80–BF
        case tail2             // two more 80–BF
        case tail3             // three more 80–BF
        case afterE0           // A0–BF, then one tail
        case afterED           // 80–9F, then one tail (no surrogates)
        case afterF0           // 90–BF, then two tails
        case afterF4           // 80–8F, then two tails (≤ U+10FFFF)
        case invalid
    }

    @usableFromInline var expectation: Expectation = .boundary

    public init() {}

    /// Whether everything fed so far forms complete, valid UTF-8.
    @inlinable
    public var isComplete: Bool { expectation == .boundary }

    /// Whether an invalid sequence has been seen (sticky until `reset()`).
    @inlinable
    public var hasFailed: Bool { expectation == .invalid }

    /// Forgets everything, for the next message.
    @inlinable
    public mutating func reset() { expectation = .boundary }

    /// Feeds the next piece. Returns false as soon as the bytes so far cannot be valid UTF-8.
    @discardableResult
    @inlinable
    public mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var state = expectation
        guard state != .invalid else { return false }
        let count = bytes.count
        guard count > 0, let base = bytes.baseAddress else { return true }
        var index = 0
        while index < count {
            if state == .boundary {
                while index &+ 8 <= count,
                      base.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index &+= 8
                }
                guard index < count else { break }
            }
            state = Self.advance(state, base.load(fromByteOffset: index, as: UInt8.self))
            if state == .invalid {
                expectation = .invalid
                return false
            }
            index &+= 1
        }
        expectation = state
        return true
    }

    /// Feeds the next piece from an array slice.
    @discardableResult
    @inlinable
    public mutating func validate(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBytes { validate($0) }
    }

    /// Validates a complete byte sequence in one go.
    @inlinable
    public static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.validate(bytes) && validator.isComplete
    }

    @inlinable
    static func advance(_ state: Expectation, _ byte: UInt8) -> Expectation {
        switch state {
        case .boundary:
            switch byte {
            case 0x00...0x7F: return .boundary
            case 0xC2...0xDF: return .tail1
            case 0xE0: return .afterE0
            case 0xE1...0xEC, 0xEE...0xEF: return .tail2
            case 0xED: return .afterED
            case 0xF0: return .afterF0
            case 0xF1...0xF3: return .tail3
            case 0xF4: return .afterF4
            default: return .invalid       // 80–BF stray tail, C0/C1 overlong, F5–FF
            }
        case .tail1: return (0x80...0xBF).contains(byte) ? .boundary : .invalid
        case .tail2: return (0x80...0xBF).contains(byte) ? .tail1 : .invalid
        case .tail3: return (0x80...0xBF).contains(byte) ? .tail2 : .invalid
        case .afterE0: return (0xA0...0xBF).contains(byte) ? .tail1 : .invalid
        case .afterED: return (0x80...0x9F).contains(byte) ? .tail1 : .invalid
        case .afterF0: return (0x90...0xBF).contains(byte) ? .tail2 : .invalid
        case .afterF4: return (0x80...0x8F).contains(byte) ? .tail2 : .invalid
        case .invalid: return .invalid
        }
    }
}
