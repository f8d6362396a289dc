import Testing
@testable import BangbangCore

@Suite struct PhoneNumberTests {
    @Test(arguments: [
        ("+8613800138000", "+8613800138000"),
        ("13800138000", "+8613800138000"),
        ("138-0013-8000", "+8613800138000"),
        (" 138 0013 8000 ", "+8613800138000"),
        ("+86 139-1234-5678", "+8613912345678"),
        ("19912345678", "+8619912345678"),
        ("+1 415 555 2671", "+14155552671"),
        ("+12345678", "+12345678"),              // 8 digits: the shortest accepted
        ("+123456789012345", "+123456789012345"), // 15 digits: the E.164 maximum
    ])
    func normalizesValidNumbers(input: String, expected: String) throws {
        #expect(try PhoneNumber(parsing: input).rawValue == expected)
    }

    @Test(arguments: [
        "", "+", "+1234567",                 // 7 digits: one short
        "+1234567890123456",                 // 16 digits: one too many
        "+12345678901234567890",             // far too many, with a plus
        "13800138000138001380",              // and bare
        "12800138000",                       // mainland mobiles start 13–19
        "10800138000",
        "1380013800",                        // 10 digits bare
        "138001380001",                      // 12 digits bare
        "+0123456789",                       // no country code starts with 0
        "8613800138000",                     // country code without +
        "(138)00138000", "138.0013.8000", "1380013800a", "+86+13800138000", "86+13800138000",
        "１３８００１３８０００",                 // full-width digits are not digits here
    ])
    func rejectsMalformedNumbers(input: String) {
        expectAccountError(.invalidField, field: "phone") { try PhoneNumber(parsing: input) }
    }

    @Test func rejectsOverlongInputBeforeParsing() {
        let input = "+86" + String(repeating: " ", count: 40) + "13800138000"
        expectAccountError(.invalidField, field: "phone") { try PhoneNumber(parsing: input) }
    }

    @Test func reportsTheFieldItWasAskedToCheck() {
        expectAccountError(.invalidField, field: "new_phone") { try PhoneNumber(parsing: "x", field: "new_phone") }
    }
}
