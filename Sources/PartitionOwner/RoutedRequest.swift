// A request routed to a partition's owner (RoutedOperations.swift): the client's request with
// what the node holding its connection knows of it, members in key order:
//   {"actor": {"runner": true, "user": 42}, "client": {"address": "10.0.0.7"}, "data": {…},
//    "id": 7, "op": "order.accept"}
// `actor` is the logged-in user (absent for a connection not logged in), with the connection's
// session (`"session": "<32 hex digits>"`) for what concerns it (the list of sessions, logging
// out), or user 0, vouched for, for the built-in administrator (a connection logged in with the
// node's admin secret) and only with an `admin.*` operation; `client` the address the
// node established for the connection (through its trusted proxies), sent with the operations
// whose limits count by address. Each is checked whole; anything else is `bad_request`.
import BangbangApplication
import BangbangCore
import BangbangProtocol

package struct RoutedRequest: Sendable {
    /// The longest client address carried (an IPv6 address with a zone is well under it).
    package static let maximumAddressLength = 64

    package var id: JSONValue
    package var operation: String
    package var data: JSONValue?
    package var actor: RoutedActor?
    package var clientAddress: String?

    package init(id: JSONValue, operation: String, data: JSONValue?, actor: RoutedActor?, clientAddress: String? = nil) {
        self.id = id
        self.operation = operation
        self.data = data
        self.actor = actor
        self.clientAddress = clientAddress
    }

    package func encoded() -> [UInt8] {
        var object: [String: JSONValue] = ["id": id, "op": .string(operation)]
        if let actor {
            var members: [String: JSONValue] = ["runner": .bool(actor.isApprovedRunner), "user": .integer(Int64(actor.user.rawValue))]
            if let session = actor.session { members["session"] = .string(session.description) }
            if actor.isVouchedAdministrator { members["administrator"] = .bool(true) }
            object["actor"] = .object(members)
        }
        if let clientAddress { object["client"] = ["address": .string(clientAddress)] }
        if let data { object["data"] = data }
        return JSONWriter.encode(.object(object))
    }

    /// Reads a routed request; a failure carries the request's id when one could be read.
    package static func decode(_ bytes: [UInt8]) -> Result<RoutedRequest, RequestDecodeFailure> {
        let base: Request
        let extra: [String: JSONValue]
        switch bytes.withUnsafeBytes({ Request.decode($0, allowing: ["actor", "client"]) }) {
        case .success(let decoded): (base, extra) = decoded
        case .failure(let failure): return .failure(failure)
        }
        var request = RoutedRequest(id: base.id, operation: base.operation, data: base.data, actor: nil)
        if let actor = extra["actor"] {
            let vouched: JSONValue? = if case .object(let members) = actor { members["administrator"] } else { nil }
            guard case .object(let members) = actor, case .integer(let user)? = members["user"], user >= 0,
                  case .bool(let isRunner)? = members["runner"], let session = readSession(members["session"]),
                  vouched == nil || vouched == .bool(true),
                  members.count == 2 + (session == nil ? 0 : 1) + (vouched == nil ? 0 : 1),
                  user > 0 || (vouched != nil && !isRunner && session == nil
                               && (RoutedOperations.administrationNames.contains(base.operation)
                                   || RoutedOperations.administrationQuestions.contains(base.operation))) else {
                return .failure(RequestDecodeFailure(id: base.id, error: DomainError(.badRequest,
                    "a routed request's \"actor\" is {\"user\": id, \"runner\": true or false} and may name its \"session\" (32 hexadecimal digits) and \"administrator\": true; user 0, the built-in administrator, only vouched for, with neither, and for admin.* operations",
                    field: "actor")))
            }
            request.actor = RoutedActor(user: UserID(UInt64(user)), isApprovedRunner: isRunner, session: session,
                                        isVouchedAdministrator: vouched != nil)
        }
        if let client = extra["client"] {
            guard case .object(let members) = client, members.count == 1, case .string(let address)? = members["address"],
                  (1...maximumAddressLength).contains(address.utf8.count) else {
                return .failure(RequestDecodeFailure(id: base.id, error: DomainError(.badRequest,
                    "a routed request's \"client\" is {\"address\": the client's address, 1 to \(maximumAddressLength) bytes}",
                    field: "client")))
            }
            request.clientAddress = address
        }
        return .success(request)
    }

    /// An actor's session: `.some(nil)` when absent, nil when present and not a session id.
    private static func readSession(_ value: JSONValue?) -> SessionID?? {
        guard let value else { return .some(nil) }
        guard case .string(let text) = value, let session = try? SessionWire.decodeID(text) else { return nil }
        return .some(session)
    }
}
