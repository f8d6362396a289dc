// Whether a user administers, asked by a node of the user's own account partition before it sends
// that user's administrator command to the partition it concerns, where who administers is not
// known (PairAdministration.swift). Not a client operation.
import BangbangApplication
import BangbangCore
import BangbangProtocol

/// A node's question to an account partition's owner before it sends an administrator's command
/// elsewhere: whether the actor, a user of this partition, administers, now (a grant revoked a
/// moment ago is already in force). `{"administrator": true}`.
package enum AdministratorQuery {
    package static let operation = "node.is_administrator"

    package static func answer(_ request: RoutedRequest, app: Application, answer: @escaping @Sendable ([UInt8]) -> Void) {
        guard let actor = RoutedOperations.askingActor(request, app: app, answer: answer) else { return }
        app.accounts.perform { owner in
            answer(Reply.success(id: request.id, data: ["administrator": .bool(owner.store.isAdministrator(actor))]))
        }
    }
}
