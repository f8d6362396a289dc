// The bounds of a validation error go on the wire as `min` and `max`, and only when there are some.
import Testing
import BangbangCore
@testable import BangbangProtocol

@Suite struct ErrorLimitTests {
    @Test func aFailureWithBoundsWritesMinAndMaxBesideTheField() throws {
        let error = DomainError(.invalidField, "tip may be at most ¥500.00", field: "tip", minimum: 1, maximum: 50_000)
        let bytes = Reply.failure(id: 3, error: error)
        #expect(try JSONParser.parse(bytes) == ["id": 3, "ok": false, "error": [
            "code": "invalid_field", "field": "tip", "message": "tip may be at most ¥500.00", "min": 1, "max": 50_000]])
        #expect(bytes == JSONWriter.encode(["id": 3, "ok": false, "error": [
            "code": "invalid_field", "field": "tip", "max": 50_000, "message": "tip may be at most ¥500.00", "min": 1]]))
        #expect(Reply.errorCode(of: bytes) == "invalid_field")
    }

    @Test func aFailureWithoutBoundsWritesNeither() throws {
        let reply = try JSONParser.parse(Reply.failure(id: 1, error: DomainError(.invalidField, "bad phone", field: "phone")))
        #expect(reply["error"]?["min"] == nil && reply["error"]?["max"] == nil)
    }

    @Test func argumentsNameTheBoundsOfLengthsRangesAndCounts() throws {
        let arguments = try Arguments(try JSONParser.parse(#"{"name": "abcdef", "n": 7, "list": [1, 2, 3]}"#))
        let long = domainError { () throws(DomainError) in try arguments.string("name", maxLength: 5) }
        #expect(long?.field == "name" && long?.maximum == 5 && long?.minimum == nil)
        let range = domainError { () throws(DomainError) in try arguments.integer("n", in: 1...5) }
        #expect(range?.minimum == 1 && range?.maximum == 5)
        let count = domainError { () throws(DomainError) in try arguments.array("list", maxCount: 2) }
        #expect(count?.field == "list" && count?.maximum == 2)
    }

    private func domainError<T>(_ body: () throws(DomainError) -> T) -> DomainError? {
        do { _ = try body(); return nil } catch { return error }
    }
}
