// The envelope of every message on `/ws` (protocol/README.md, "Messages").
//
//   request  {"id": 7, "op": "order.accept", "data": {…}}
//   reply    {"id": 7, "ok": true, "data": {…}}
//            {"id": 7, "ok": false, "error": {"code": "order_taken", "message": "…", "field": …}}
//            (`rate_limited` errors also carry "retry_after_ms"; `invalid_field` ones may carry "min", "max")
//   event    {"event": "order.changed", "seq": 42, "data": {…}}          personal stream
//            {"event": "feed.enter", "type": "express", "seq": 9, "data": {…}}   board feed
//
// Every request gets exactly one reply carrying its id. A message that cannot be read as a
// request at all is answered with `bad_request` and the id it carried, or null.
import BangbangCore

extension ErrorCode {
    /// The message is not a JSON object with an `id` and an `op`.
    public static let badRequest = ErrorCode("bad_request")
    /// The `op` names no operation this server has.
    public static let unknownOperation = ErrorCode("unknown_operation")
    /// The server could not make the change durable (disk full, I/O error); nothing was changed.
    public static let storageUnavailable = ErrorCode("storage_unavailable")
    /// A bug on the server; the request may be retried. Never carries internal details.
    public static let internalError = ErrorCode("internal_error")
    /// The server is shutting down; reconnect and retry.
    public static let shuttingDown = ErrorCode("shutting_down")
}

public struct Request: Sendable {
    /// The client's id for this request, echoed in the reply: a string (≤ 64) or an integer.
    public var id: JSONValue
    public var operation: String
    public var data: JSONValue?

    public init(id: JSONValue, operation: String, data: JSONValue? = nil) {
        self.id = id
        self.operation = operation
        self.data = data
    }

    /// Reads a request from a text message. On failure the error carries the id when one could be
    /// read, so the reply still reaches the right callback on the client.
    public static func decode(_ bytes: UnsafeRawBufferPointer) -> Result<Request, RequestDecodeFailure> {
        decode(bytes, allowing: []).map(\.request)
    }

    /// A request whose envelope may also carry the members named in `extra` (a routed request's
    /// actor), returned as they were read; any other member is refused as unknown.
    public static func decode(_ bytes: UnsafeRawBufferPointer, allowing extra: Set<String>)
        -> Result<(request: Request, extra: [String: JSONValue]), RequestDecodeFailure> {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            return .failure(RequestDecodeFailure(id: .null, error: DomainError(.badRequest, "not valid JSON: \(error)")))
        }
        guard case .object(let members) = value else {
            return .failure(RequestDecodeFailure(id: .null, error: DomainError(.badRequest, "a request must be a JSON object")))
        }
        let id = members["id"] ?? .null
        switch id {
        case .integer: break
        case .string(let text) where text.utf8.count <= 64: break
        default:
            return .failure(RequestDecodeFailure(id: .null, error: DomainError(.badRequest,
                "a request needs an \"id\": an integer or a string of at most 64 bytes", field: "id")))
        }
        guard case .string(let operation)? = members["op"], !operation.isEmpty, operation.utf8.count <= 64 else {
            return .failure(RequestDecodeFailure(id: id, error: DomainError(.badRequest,
                "a request needs an \"op\": the operation name", field: "op")))
        }
        // "id" and "op" are present by now, so any further member but "data" is unknown.
        var extraMembers: [String: JSONValue] = [:]
        if members.count > (members["data"] == nil ? 2 : 3) {
            for key in members.keys.sorted() where !["id", "op", "data"].contains(key) {
                guard extra.contains(key) else {
                    return .failure(RequestDecodeFailure(id: id, error: DomainError(.badRequest,
                        "unknown envelope field \"\(key)\"; operation fields go inside \"data\"", field: key)))
                }
                extraMembers[key] = members[key]
            }
        }
        return .success((Request(id: id, operation: operation, data: members["data"]), extraMembers))
    }
}

public struct RequestDecodeFailure: Error, Sendable {
    public var id: JSONValue
    public var error: DomainError

    public init(id: JSONValue, error: DomainError) {
        self.id = id
        self.error = error
    }
}

// Messages are written member by member in key order ("data" < "error" < "event" < "id" < "ok"
// < "seq" < "type"), the same bytes `JSONWriter.write(_:)` makes of the equivalent object. `data`
// comes either as a value or already encoded (an order written by `OrderWire`).
public enum Reply {
    public static func success(id: JSONValue, data: JSONValue) -> [UInt8] {
        success(id: id) { $0.write(data) }
    }

    /// A success whose `data` is already JSON bytes.
    public static func success(id: JSONValue, encodedData: [UInt8]) -> [UInt8] {
        success(id: id, capacity: encodedData.count + envelopeRoom) { $0.write(encoded: encodedData) }
    }

    /// A success whose `data` is `{"order": <view>}` around an order view already encoded: the
    /// bytes of `success(id:encodedData: OrderWire.orderData(encodedView:))`, without the copy
    /// of the view in between.
    public static func success(id: JSONValue, encodedOrderView: [UInt8]) -> [UInt8] {
        success(id: id, capacity: encodedOrderView.count + envelopeRoom) {
            OrderWire.writeOrderData(encodedView: encodedOrderView, to: &$0)
        }
    }

    /// Room for the members around a `data` of known size (a long escaped id just grows the
    /// buffer), so such a message is written into one buffer of about its own size: a
    /// default-sized one is over a kilobyte, past the allocator's fast per-thread caches.
    static let envelopeRoom = 192

    private static func success(id: JSONValue, capacity: Int = 1024, writeData: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        writer.key("data")
        writeData(&writer)
        writer.key("id")
        writer.write(id)
        writer.key("ok")
        writer.write(bool: true)
        writer.endObject()
        return writer.bytes
    }

    /// The error code of a reply this server wrote (`failure` writes it first), read without
    /// parsing the message; nil for a success, or for bytes not written so.
    public static func errorCode(of message: [UInt8]) -> String? {
        let prefix = #"{"error":{"code":""#.utf8
        guard message.starts(with: prefix) else { return nil }
        let start = prefix.count
        guard let end = message[start...].firstIndex(of: UInt8(ascii: "\"")), end > start else { return nil }
        return String(decoding: message[start..<end], as: UTF8.self)
    }

    /// The data of a successful reply, parsed; nil for a refusal, or for bytes that are not a reply.
    public static func data(of message: [UInt8]) -> [String: JSONValue]? {
        guard case .object(let reply)? = try? JSONParser.parse(message), reply["ok"] == .bool(true),
              case .object(let data)? = reply["data"] else { return nil }
        return data
    }

    public static func failure(id: JSONValue, error: DomainError) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("error")
        writer.beginObject()
        writer.key("code")
        writer.write(string: error.code.rawValue)
        if let field = error.field {
            writer.key("field")
            writer.write(string: field)
        }
        if let maximum = error.maximum {
            writer.key("max")
            writer.write(integer: maximum)
        }
        writer.key("message")
        writer.write(string: error.message)
        if let minimum = error.minimum {
            writer.key("min")
            writer.write(integer: minimum)
        }
        if let wait = error.retryAfterMilliseconds {
            writer.key("retry_after_ms")
            writer.write(integer: wait)
        }
        writer.endObject()
        writer.key("id")
        writer.write(id)
        writer.key("ok")
        writer.write(bool: false)
        writer.endObject()
        return writer.bytes
    }
}

public enum EventMessage {
    /// A personal-stream event: `seq` is the user's stream position, used by `auth.resume`.
    public static func personal(name: String, sequence: UInt64, data: JSONValue) -> [UInt8] {
        event(name: name, sequence: sequence, type: nil) { $0.write(data) }
    }

    /// A personal-stream event whose `data` is already JSON bytes.
    public static func personal(name: String, sequence: UInt64, encodedData: [UInt8]) -> [UInt8] {
        event(name: name, sequence: sequence, type: nil, capacity: encodedData.count + name.utf8.count + Reply.envelopeRoom) {
            $0.write(encoded: encodedData)
        }
    }

    /// A board-feed event: `seq` is the board's own position (one counter per order type), the
    /// same for every watcher, so the message is encoded once and shared.
    public static func board(name: String, type: String, sequence: UInt64, data: JSONValue) -> [UInt8] {
        event(name: name, sequence: sequence, type: type) { $0.write(data) }
    }

    /// A board-feed event whose `data` is already JSON bytes.
    public static func board(name: String, type: String, sequence: UInt64, encodedData: [UInt8]) -> [UInt8] {
        event(name: name, sequence: sequence, type: type, capacity: encodedData.count + name.utf8.count + Reply.envelopeRoom) {
            $0.write(encoded: encodedData)
        }
    }

    /// `{"data": …, "event": name, "seq": sequence[, "type": type]}`.
    private static func event(name: String, sequence: UInt64, type: String?, capacity: Int = 1024,
                              writeData: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        writer.key("data")
        writeData(&writer)
        writer.key("event")
        writer.write(string: name)
        writer.key("seq")
        writer.write(integer: Int64(sequence))
        if let type {
            writer.key("type")
            writer.write(string: type)
        }
        writer.endObject()
        return writer.bytes
    }
}
