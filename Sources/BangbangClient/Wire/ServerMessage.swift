// The envelope of everything the server sends on /ws (protocol/README.md, "Messages"): a reply
// to one of our requests, a personal event, or a board-feed event.
import JSON

enum ServerMessage: Sendable {
    /// `id` is nil when the server could not read ours (`bad_request` with a null id).
    case reply(id: Int64?, Result<JSONValue, ServerError>)
    case personal(PersonalEvent)
    case board(BoardFeedEvent)

    init(parsing bytes: [UInt8]) throws(DecodingFailure) {
        let value: JSONValue
        do { value = try JSONParser.parse(bytes) } catch {
            throw DecodingFailure(path: [], message: "not JSON: \(error)")
        }
        try self.init(wire: value)
    }

    /// An absent or null `data` is an empty one (protocol/README.md).
    private static func data(_ value: JSONValue?) -> JSONValue {
        guard let value, value != .null else { return .object([:]) }
        return value
    }

    init(wire value: JSONValue) throws(DecodingFailure) {
        var object = try WireObject(value, at: [])
        defer { object.finish() }
        if let name: String = try object.optional("event") {
            let seq: Int64 = try object.required("seq")
            let data = Self.data(object.raw("data"))
            if let board: OrderType = try object.optional("type") {
                self = .board(try BoardFeedEvent(name: name, board: board, seq: seq, data: data))
            } else {
                self = .personal(PersonalEvent(name: name, seq: seq, data: data))
            }
            return
        }
        // Our ids are integers; any other id is not a reply to us.
        let id: Int64? = if case .integer(let number)? = object.raw("id") { number } else { nil }
        let isSuccess: Bool = try object.required("ok")
        if isSuccess {
            self = .reply(id: id, .success(Self.data(object.raw("data"))))
        } else {
            self = .reply(id: id, .failure(try object.required("error")))
        }
    }
}
