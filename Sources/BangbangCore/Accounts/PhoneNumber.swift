// Phone numbers in E.164 form (ITU-T E.164: "+", country code, subscriber number, at most 15
// digits). Accounts are keyed by them, so there is exactly one spelling per number.

/// A validated phone number, always stored as `+` and 8–15 digits.
public struct PhoneNumber: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// The E.164 spelling, e.g. `+8613800138000`.
    public let rawValue: String

    /// Trusts `rawValue` to be E.164 already; for values read back from the journal.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Normalizes user input. Spaces and dashes are dropped; `+` and 8–15 digits (not starting
    /// with 0) is taken as is; a bare 11-digit mainland mobile number `1[3-9]xxxxxxxxx` gets
    /// `+86`. Anything else is `invalid_field` on `field`.
    public init(parsing input: String, field: String = "phone") throws(DomainError) {
        // E.164 is at most 16 characters; allow generous separators, but bound the work.
        guard input.utf8.count <= 40 else { throw Self.invalid(field) }
        // The digits on the stack: no number has more than 15, and parsing one (every express
        // order's contact phone, twice per publish) then allocates nothing.
        var digits = SIMD16<UInt8>()
        var count = 0
        var sawPlus = false
        for byte in input.utf8 {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "-"):
                continue
            case UInt8(ascii: "+"):
                guard !sawPlus, count == 0 else { throw Self.invalid(field) }
                sawPlus = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard count < digits.scalarCount else { throw Self.invalid(field) }
                digits[count] = byte
                count += 1
            default:
                throw Self.invalid(field)
            }
        }
        let text = withUnsafeBytes(of: digits) { String(decoding: UnsafeRawBufferPointer(rebasing: $0[..<count]), as: UTF8.self) }
        if sawPlus {
            guard (8...15).contains(count), digits[0] != UInt8(ascii: "0") else { throw Self.invalid(field) }
            rawValue = "+" + text
        } else {
            guard count == 11, digits[0] == UInt8(ascii: "1"),
                  (UInt8(ascii: "3")...UInt8(ascii: "9")).contains(digits[1])
            else { throw Self.invalid(field) }
            rawValue = "+86" + text
        }
    }

    public static func < (lhs: PhoneNumber, rhs: PhoneNumber) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { rawValue }

    private static func invalid(_ field: String) -> DomainError {
        DomainError(.invalidField,
                    "Enter a phone number as + and country code, or an 11-digit mainland mobile number.",
                    field: field)
    }
}
