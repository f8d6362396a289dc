import Testing
import BangbangCore
@testable import BangbangProtocol

@Suite struct EnvelopeTests {
    private func decode(_ text: String) -> Result<Request, RequestDecodeFailure> {
        Array(text.utf8).withUnsafeBytes { Request.decode($0) }
    }

    @Test func aRepliesErrorCodeIsReadFromItsFirstBytes() {
        let refused = Reply.failure(id: "x", error: DomainError(ErrorCode("order_taken"), "taken", field: "order_id"))
        #expect(Reply.errorCode(of: refused) == "order_taken")
        #expect(Reply.errorCode(of: Reply.failure(id: 1, error: .rateLimited("slow", retryAfterMilliseconds: 5))) == "rate_limited")
        // A success, whatever its data says, has none.
        #expect(Reply.errorCode(of: Reply.success(id: 1, data: ["error": ["code": "order_taken"]])) == nil)
        #expect(Reply.errorCode(of: Array(#"{"error":{"code":""#.utf8)) == nil)
        #expect(Reply.errorCode(of: Array(#"{"error":{"code":"#.utf8)) == nil)
        #expect(Reply.errorCode(of: []) == nil)
    }

    @Test func aRepliesDataIsReadOnlyFromASuccess() {
        #expect(Reply.data(of: Reply.success(id: 1, data: ["user": ["id": 7]])) == ["user": ["id": 7]])
        #expect(Reply.data(of: Reply.failure(id: 1, error: DomainError(ErrorCode("order_taken"), "taken"))) == nil)
        #expect(Reply.data(of: Array(#"{"id": 1, "ok": false, "data": {"user": 7}}"#.utf8)) == nil, "data beside a refusal is none")
        #expect(Reply.data(of: Array(#"{"id": 1, "ok": true, "data": [1]}"#.utf8)) == nil)
        #expect(Reply.data(of: Array("not json".utf8)) == nil && Reply.data(of: []) == nil)
    }

    @Test func decodesAWellFormedRequest() throws {
        let request = try decode(#"{"id": 7, "op": "order.accept", "data": {"order_id": 5}}"#).get()
        #expect(request.id == 7)
        #expect(request.operation == "order.accept")
        #expect(request.data == ["order_id": 5])
    }

    @Test(arguments: [
        ("not json", JSONValue.null, "bad_request"),
        ("[1]", .null, "bad_request"),
        (#"{"op": "x"}"#, .null, "bad_request"),
        (#"{"id": 1.5, "op": "x"}"#, .null, "bad_request"),
        (#"{"id": 3}"#, 3, "bad_request"),
        (#"{"id": "a", "op": ""}"#, "a", "bad_request"),
        (#"{"id": 4, "op": "x", "tip": 1}"#, 4, "bad_request"),
    ])
    func refusesMalformedEnvelopesKeepingTheId(text: String, id: JSONValue, code: String) {
        guard case .failure(let failure) = decode(text) else { Issue.record("expected failure"); return }
        #expect(failure.id == id)
        #expect(failure.error.code.rawValue == code)
    }

    @Test func repliesCarryTheIdAndTypedErrors() throws {
        let reply = try JSONParser.parse(Reply.failure(id: "r1", error: DomainError(.invalidField, "tip must be ≥ 0", field: "tip")))
        #expect(reply == ["id": "r1", "ok": false, "error": ["code": "invalid_field", "message": "tip must be ≥ 0", "field": "tip"]])
        #expect(try JSONParser.parse(Reply.success(id: 2, data: ["x": 1])) == ["id": 2, "ok": true, "data": ["x": 1]])
    }

    @Test func rateLimitedRepliesSayWhenToRetryAndWriteTheSameBytesAsTheWriter() throws {
        let error = DomainError.rateLimited("slow \"down\"", retryAfterMilliseconds: 41_250)
        let bytes = Reply.failure(id: 9, error: error)
        #expect(try JSONParser.parse(bytes) == ["id": 9, "ok": false,
                                                "error": ["code": "rate_limited", "message": "slow \"down\"", "retry_after_ms": 41_250]])
        #expect(bytes == JSONWriter.encode(["id": 9, "ok": false, "error": ["code": "rate_limited", "message": "slow \"down\"",
                                                                             "retry_after_ms": 41_250]]))
        let other = try JSONParser.parse(Reply.failure(id: 9, error: DomainError(.invalidField, "x", field: "tip")))
        #expect(other["error"]?["retry_after_ms"] == nil)
    }
}

@Suite struct ArgumentsTests {
    private func arguments(_ text: String) throws -> Arguments { try Arguments(try JSONParser.parse(text)) }

    @Test func readsTypedFields() throws {
        let args = try arguments(#"{"name": "a", "n": 3, "flag": true, "items": [{"qty": 2}], "tags": ["x"]}"#)
        #expect(try args.string("name") == "a")
        #expect(try args.integer("n", in: 1...5) == 3)
        #expect(try args.bool("flag"))
        #expect(try args.objects("items", maxCount: 5)[0].integer("qty") == 2)
        #expect(try args.strings("tags", maxCount: 2) == ["x"])
        #expect(try args.optionalString("missing") == nil)
    }

    @Test func namesTheFieldInEveryError() throws {
        let args = try arguments(#"{"name": 5, "n": 9, "items": [{"qty": "two"}], "long": "abcdef"}"#)
        func field(_ body: () throws -> Void) -> String? {
            do { try body(); return nil } catch let error as DomainError { return error.field } catch { return "unexpected \(error)" }
        }
        #expect(field { _ = try args.string("name") } == "name")
        #expect(field { _ = try args.integer("n", in: 1...5) } == "n")
        #expect(field { _ = try args.integer("absent") } == "absent")
        #expect(field { _ = try args.objects("items", maxCount: 5)[0].integer("qty") } == "items[0].qty")
        #expect(field { _ = try args.string("long", maxLength: 3) } == "long")
        #expect(field { try args.allowOnly(["name", "n", "items"]) } == "long")
    }

    @Test func choiceListsTheAllowedValues() throws {
        let args = try arguments(#"{"type": "taxi"}"#)
        do {
            _ = try args.choice("type", as: OrderType.self)
            Issue.record("expected an error")
        } catch {
            #expect(error.message.contains("express, purchase, bounty, group"))
        }
    }
}
