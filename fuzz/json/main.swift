// Fuzz target: the application protocol's JSON parser, writer and request envelope.
//
// The whole input is one message. Invariants, beyond "no crash and no sanitizer report":
//   - what parses re-encodes to valid UTF-8 that parses back to an equal value (round trip),
//     and encoding is deterministic: encoding that value again gives the same bytes;
//   - nesting deeper than the parser's limit never parses (the limit guards the stack);
//   - `Request.decode` agrees with the parser: it succeeds only on a JSON object, and the id
//     it reports on failure is null or an integer or a short string;
//   - a routed request's envelope (`allowing: ["actor", "client"]`) reads what the plain one reads the same
//     way, with nothing extra, and adds at most the member it allows.
import BangbangProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let parsed = Result { () throws(JSONParseError) in try JSONParser.parse(input) }
    if case .success(let value) = parsed {
        require(depth(of: value) <= JSONParser.defaultMaximumDepth, "parsed a document nested past the limit")
        let encoded = JSONWriter.encode(value)
        require(String(validating: encoded, as: UTF8.self) != nil, "JSONWriter wrote invalid UTF-8")
        let reparsed: JSONValue
        do {
            reparsed = try JSONParser.parse(encoded)
        } catch {
            fatalError("JSONWriter output does not parse: \(error): \(String(decoding: encoded, as: UTF8.self))")
        }
        require(reparsed == value, "round trip changed the value: \(String(decoding: encoded, as: UTF8.self))")
        require(JSONWriter.encode(reparsed) == encoded, "encoding is not deterministic")
    }
    if case .failure(let error) = parsed {
        require((0...size).contains(error.offset), "error offset \(error.offset) outside the input")
    }

    switch Request.decode(input) {
    case .success(let request):
        guard case .success(.object) = parsed else { fatalError("Request.decode accepted a non-object") }
        require(!request.operation.isEmpty && request.operation.utf8.count <= 64, "bad op accepted")
        switch request.id {
        case .integer: break
        case .string(let text): require(text.utf8.count <= 64, "long string id accepted")
        default: fatalError("id of type \(request.id.typeName) accepted")
        }
    case .failure(let failure):
        switch failure.id {
        case .null, .integer: break
        case .string(let text): require(text.utf8.count <= 64, "long string id echoed")
        default: fatalError("failure carries an id of type \(failure.id.typeName)")
        }
        // The reply to a bad request must itself be valid JSON.
        let reply = Reply.failure(id: failure.id, error: failure.error)
        require((try? JSONParser.parse(reply)) != nil, "the bad_request reply is not valid JSON")
    }
    let plain = Request.decode(input)
    switch (plain, Request.decode(input, allowing: ["actor", "client"])) {
    case (.success(let request), .success(let routed)):
        require(routed.request.id == request.id && routed.request.operation == request.operation
                && routed.request.data == request.data && routed.extra.isEmpty, "a routed envelope read a request differently")
    case (.success, .failure):
        fatalError("a routed envelope refused a plain request")
    case (.failure, .success(let routed)):
        require(!routed.extra.isEmpty && Set(routed.extra.keys).isSubset(of: ["actor", "client"]),
                "a routed envelope accepted \(routed.extra.keys.sorted())")
    case (.failure, .failure):
        break
    }
    return 0
}

private func depth(of value: JSONValue) -> Int {
    switch value {
    case .array(let elements): 1 + (elements.map(depth(of:)).max() ?? 0)
    case .object(let members): 1 + (members.values.map(depth(of:)).max() ?? 0)
    default: 0
    }
}
