// What a node does with its account owner's answer to a login or a resume it routed for one of its
// connections: it reads who is logged in and where the user's stream stands, follows the stream for
// the connection from where the device stands (FollowedStreams.swift), and sends the reply at the
// point of the stream a connection of the owner's own would get it: a login's at once (its `seq` is
// the stream's end), a resume's after the events the device missed, so the client sees them, then
// the reply, then what follows, exactly as on the owner. A resume told to resynchronize replays
// nothing and follows from the end.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import JSON
import PartitionOwner
import WebSocketServer

package struct RemoteLogin: Sendable, Equatable {
    package let user: UserID
    package let session: SessionID
    package let isApprovedRunner: Bool
    /// The stream's last number when the owner answered.
    package let sequence: UInt64
    let resync: Bool

    /// The login in the owner's successful reply to `auth.login_code`, `auth.login_password` or
    /// `auth.resume` (whose token the client sent: `token`); nil for a refusal or anything else.
    static func read(reply: [UInt8], resumedWith token: String? = nil) -> RemoteLogin? {
        guard let data = Reply.data(of: reply), case .object(let user)? = data["user"],
              case .integer(let id)? = user["id"], case .bool(let isRunner)? = user["is_verified_runner"],
              case .integer(let sequence)? = data["seq"], sequence >= 0 else { return nil }
        let issued: String
        switch (token, data["token"]) {
        case (let resumed?, nil): issued = resumed
        case (nil, .string(let fresh)?): issued = fresh
        default: return nil
        }
        guard let claims = SessionToken.claims(of: issued), claims.user.rawValue == UInt64(id) else { return nil }
        return RemoteLogin(user: claims.user, session: claims.session, isApprovedRunner: isRunner, sequence: UInt64(sequence),
                           resync: data["resync"] == .bool(true))
    }

    /// Where the connection's device follows the stream from: the device's own number for a resume
    /// that replays, the stream's end otherwise.
    func followsAfter(lastSeen: UInt64?) -> UInt64 {
        guard let lastSeen, !resync else { return sequence }
        return min(lastSeen, sequence)
    }
}

/// One connection's stream around its login reply: events up to the login's number go before the
/// reply, the reply when the stream reaches that number, the rest after. Confined to the followed
/// streams' queue, like the sink that feeds it.
package struct LoginReplyGate {
    package enum Output {
        case event(FollowedStreams.Event)
        case reply([UInt8])
    }

    private let sequence: UInt64
    private var reply: [UInt8]?

    init(reply: [UInt8], login: RemoteLogin) {
        sequence = login.sequence
        self.reply = reply
    }

    /// When the device follows from `after`: the reply, if nothing is to come before it.
    package mutating func start(after: UInt64) -> [Output] {
        guard after >= sequence, let due = reply else { return [] }
        reply = nil
        return [.reply(due)]
    }

    /// What to send for events the follower passed on, in order: each event, and the reply after
    /// the one numbered the login's number (or before the first past it).
    mutating func pass(_ events: [FollowedStreams.Event]) -> [Output] {
        var outputs: [Output] = []
        for event in events {
            if let due = reply, event.number > sequence {
                outputs.append(.reply(due))
                reply = nil
            }
            outputs.append(.event(event))
            if let due = reply, event.number == sequence {
                outputs.append(.reply(due))
                reply = nil
            }
        }
        return outputs
    }
}
