// Events the server pushes (protocol/events.md, operations-accounts.md "Personal events"): the
// personal stream, numbered per user and replayed on resume, and the board feed.
import JSON

/// One event of your personal stream.
public struct PersonalEvent: Sendable, Hashable {
    /// Your stream's position: +1 per event, the same on every device, kept across restarts.
    public var seq: Int64
    public var kind: Kind

    public enum Kind: Sendable, Hashable {
        /// Something happened to one of your orders; `order` is as you may see it now.
        case orderChanged(Order, change: OrderChange)
        /// Another device logged in to your account.
        case login(device: String?, method: LoginMethod)
        /// One of your sessions was logged out (this one too, possibly: if so, requests answer
        /// `unauthenticated` and the connection reports `.loggedOut`).
        case loggedOut
        case passwordChanged
        case profileUpdated
        case phoneChanged
        case administratorChanged(isAdministrator: Bool)
        case verificationDecided(VerificationDecision)
        /// An event this library version cannot read (a newer server); its `seq` still counts.
        case unrecognized(name: String, reason: String)
    }

    public init(seq: Int64, kind: Kind) {
        self.seq = seq
        self.kind = kind
    }

    /// Reads `data` of event `name`; never fails, so the stream's numbering is never broken by
    /// an event the library cannot read.
    init(name: String, seq: Int64, data: JSONValue) {
        self.seq = seq
        do {
            kind = try Self.decodeKind(name: name, data: data)
        } catch {
            kind = .unrecognized(name: name, reason: error.description)
        }
    }

    private static func decodeKind(name: String, data: JSONValue) throws(DecodingFailure) -> Kind {
        let path: FieldPath = [.key("data")]
        var object = try WireObject(data, at: path)
        defer { object.finish() }
        switch name {
        case "order.changed":
            return .orderChanged(try object.required("order"), change: try object.required("change"))
        case "account.login":
            return .login(device: try object.optional("device"), method: try object.required("method"))
        case "account.logged_out": return .loggedOut
        case "account.password_changed": return .passwordChanged
        case "account.profile_updated": return .profileUpdated
        case "account.phone_changed": return .phoneChanged
        case "account.administrator_changed":
            return .administratorChanged(isAdministrator: try object.required("is_administrator"))
        case "runner.verification_decided":
            let status: VerificationStatus = try object.required("status")
            switch status {
            case .approved: return .verificationDecided(.approved)
            case .rejected: return .verificationDecided(.rejected(reason: try object.optional("reason") ?? ""))
            case .pending: throw DecodingFailure(path: path.appending(.key("status")), message: "a decision cannot be pending")
            }
        default:
            return .unrecognized(name: name, reason: "unknown event")
        }
    }
}

public enum VerificationDecision: Sendable, Hashable {
    case approved
    /// The applicant reads the reason.
    case rejected(reason: String)
}

/// One event of the board feed of a `board.subscribe`.
public struct BoardFeedEvent: Sendable, Hashable {
    /// The board (order type) this event is on.
    public var board: OrderType
    /// The board's own position: +1 per change on the board.
    public var seq: Int64
    public var change: Change

    public enum Change: Sendable, Hashable {
        /// An order started matching the filter: published, open again, a tip that reached `min_tip`.
        case entered(Order)
        /// A listed order changed and still matches.
        case updated(Order)
        /// An order stopped matching; `status` is its new status.
        case left(OrderID, status: OrderStatus)
    }

    public init(board: OrderType, seq: Int64, change: Change) {
        self.board = board
        self.seq = seq
        self.change = change
    }

    init(name: String, board: OrderType, seq: Int64, data: JSONValue) throws(DecodingFailure) {
        self.board = board
        self.seq = seq
        var object = try WireObject(data, at: [.key("data")])
        switch name {
        case "feed.enter": change = .entered(try object.required("order"))
        case "feed.update": change = .updated(try object.required("order"))
        case "feed.leave": change = .left(try object.required("order_id"), status: try object.required("status"))
        default: throw DecodingFailure(path: [.key("event")], message: "unknown board event '\(name)'")
        }
        object.finish()
    }
}
