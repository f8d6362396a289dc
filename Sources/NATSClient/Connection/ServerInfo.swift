// The INFO a server sends when a client connects, and again when the cluster changes.
import JSON

/// The parts of INFO the client uses.
public struct ServerInfo: Sendable, Equatable {
    public var serverID: String
    public var serverName: String
    public var version: String
    /// The largest message the server accepts.
    public var maxPayload: Int
    public var supportsHeaders: Bool
    public var isJetStreamEnabled: Bool
    /// Other servers of the cluster this client may connect to.
    public var connectURLs: [String]

    /// Decodes INFO's JSON; nil when it is not a JSON object.
    static func decode(_ json: UnsafeRawBufferPointer) -> ServerInfo? {
        guard let value = try? JSONParser.parse(json), case .object(let members) = value else { return nil }
        func string(_ key: String) -> String {
            if case .string(let text)? = members[key] { return text }
            return ""
        }
        var urls: [String] = []
        if case .array(let items)? = members["connect_urls"] {
            for case .string(let url) in items { urls.append(url) }
        }
        var maxPayload = 1024 * 1024
        if case .integer(let value)? = members["max_payload"], value > 0 { maxPayload = Int(value) }
        return ServerInfo(serverID: string("server_id"), serverName: string("server_name"), version: string("version"),
                          maxPayload: maxPayload, supportsHeaders: members["headers"] == .bool(true),
                          isJetStreamEnabled: members["jetstream"] == .bool(true), connectURLs: urls)
    }
}
