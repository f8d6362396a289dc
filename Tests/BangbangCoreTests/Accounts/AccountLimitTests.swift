// Account text and passwords name the bounds they broke, in characters.
import Testing
@testable import BangbangCore

@Suite struct AccountLimitTests {
    @Test func textTooLongNamesItsMaximumAndEmptyTextItsMinimum() {
        let long = domainError { () throws(DomainError) in
            try AccountText.validated(String(repeating: "字", count: 21), field: "nickname", label: "Nickname", length: 1...20)
        }
        #expect(long?.field == "nickname" && long?.maximum == 20 && long?.minimum == nil)
        let empty = domainError { () throws(DomainError) in
            try AccountText.validated("   ", field: "nickname", label: "Nickname", length: 1...20)
        }
        #expect(empty?.field == "nickname" && empty?.minimum == 1 && empty?.maximum == nil)
    }

    @Test func aPasswordOutOfItsLengthNamesBothBounds() {
        let error = domainError { () throws(DomainError) in try AccountStore.validatePassword("short", field: "new_password") }
        #expect(error?.field == "new_password")
        #expect(error?.minimum == Int64(PasswordRules.length.lowerBound) && error?.maximum == Int64(PasswordRules.length.upperBound))
    }
}
