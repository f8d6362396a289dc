// The envelope of every message on `/ws` (protocol/README.md, "Messages").
//
//   request  {"id": 7, "op": "order.accept", "data": {…}}
//   reply    {"id": 7, "ok": true, "data": {…}}
//            {"id": 7, "ok": false, "error": {"code": "order_taken", "message": "…", "field": …}}
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
        if let unknown = members.keys.sorted().first(where: { !["id", "op", "data"].contains($0) }) {
            return .failure(RequestDecodeFailure(id: id, error: DomainError(.badRequest,
                "unknown envelope field \"\(unknown)\"; operation fields go inside \"data\"", field: unknown)))
        }
        return .success(Request(id: id, operation: operation, data: members["data"]))
    }
}

public struct RequestDecodeFailure: Error, Sendable {
    public var id: JSONValue
    public var error: DomainError
}

public enum Reply {
    public static func success(id: JSONValue, data: JSONValue) -> [UInt8] {
        JSONWriter.encode(.object(["id": id, "ok": true, "data": data]))
    }

    public static func failure(id: JSONValue, error: DomainError) -> [UInt8] {
        var body: [String: JSONValue] = ["code": .string(error.code.rawValue), "message": .string(error.message)]
        if let field = error.field { body["field"] = .string(field) }
        return JSONWriter.encode(.object(["id": id, "ok": false, "error": .object(body)]))
    }
}

public enum EventMessage {
    /// A personal-stream event: `seq` is the user's stream position, used by `auth.resume`.
    public static func personal(name: String, sequence: UInt64, data: JSONValue) -> [UInt8] {
        JSONWriter.encode(.object(["event": .string(name), "seq": .integer(Int64(sequence)), "data": data]))
    }

    /// A board-feed event: `seq` is the board's own position (one counter per order type), the
    /// same for every watcher, so the message is encoded once and shared.
    public static func board(name: String, type: String, sequence: UInt64, data: JSONValue) -> [UInt8] {
        JSONWriter.encode(.object(["event": .string(name), "type": .string(type),
                                   "seq": .integer(Int64(sequence)), "data": data]))
    }
}
