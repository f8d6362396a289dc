// A node's question to the owner of a user's account partition: the events of the user's
// personal stream after a number, so that a device may resume on any node. A node
// that follows the stream for the devices it holds (PersonalStreamFollower) asks it when it
// missed an event or when a device resumes there from an older number; the answer is
// PersonalStreamAnswer's. Not a client operation: only nodes reach `bb.req.a<n>`, and the
// operation table every connection's request goes through does not know the name.
//   {"data": {"after": 3, "user": 42}, "id": 1, "op": "node.stream_after"}
import BangbangApplication
import BangbangCore
import BangbangProtocol
import InboxProtocol

package enum PersonalStreamQuery {
    package static let operation = "node.stream_after"

    /// The answer of the owner of the user's account partition (RoutedOperations checked that it
    /// is this node's): the events, or a `bad_request` reply for a malformed question.
    package static func answer(_ request: RoutedRequest, app: Application) -> [UInt8] {
        guard case .object(let data)? = request.data, data.count == 2, case .integer(let user)? = data["user"], user > 0,
              case .integer(let after)? = data["after"], after >= 0 else {
            app.metrics.requests.increment(label: "routed:bad_request")
            return Reply.failure(id: request.id, error: DomainError(.badRequest,
                "\"\(operation)\" asks {\"user\": a user id, \"after\": a number of their stream}", field: "data"))
        }
        let kept = app.publisher.accounts.streams.kept(for: UserID(UInt64(user)), after: UInt64(after), now: app.clock())
        return PersonalStreamAnswer.encode(last: kept.last, events: kept.events.map {
            PersonalStreamAnswer.Event(number: $0.number, message: $0.message)
        })
    }
}
