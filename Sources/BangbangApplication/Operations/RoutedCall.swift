// A request run for a connection that is not here: a cluster node holding the client's
// connection routed it to this owner (ScaleOut's RoutedOperations.swift), with who asks as that
// node knows them. The operation runs as for a connection of this server's own
// (`OperationContext.Caller`), and its one reply goes back to the node.
import BangbangCore
import BangbangProtocol

/// Who asks, as the node holding their connection knows them.
package struct RoutedActor: Sendable, Equatable {
    package let user: UserID
    package let isApprovedRunner: Bool
    /// The session the connection is logged in with, sent where the operation concerns it.
    package var session: SessionID?
    /// The actor's own account partition, where who administers is recorded, said for this
    /// request that the actor administers: an owner of another account partition cannot read
    /// that, and takes its word for it.
    package var isVouchedAdministrator = false

    package init(user: UserID, isApprovedRunner: Bool, session: SessionID? = nil, isVouchedAdministrator: Bool = false) {
        self.user = user
        self.isApprovedRunner = isApprovedRunner
        self.session = session
        self.isVouchedAdministrator = isVouchedAdministrator
    }

    /// The server operator, logged in on a node with its admin secret (BuiltInAdministrator.swift).
    package static let builtInAdministrator = RoutedActor(user: BuiltInAdministrator.id, isApprovedRunner: false, isVouchedAdministrator: true)

    package var isBuiltInAdministrator: Bool { user == BuiltInAdministrator.id }
}

/// A routed request in progress on the owner: where its one reply goes.
package final class RoutedCall: Sendable {
    let app: Application
    /// Who asks; nil for a connection not logged in (only operations that need no login run so).
    package let actor: RoutedActor?
    /// The client's address as the node holding the connection established it, when sent.
    package let clientAddress: String?
    private let answer: @Sendable ([UInt8]) -> Void

    package init(app: Application, actor: RoutedActor?, clientAddress: String?, answer: @escaping @Sendable ([UInt8]) -> Void) {
        self.app = app
        self.actor = actor
        self.clientAddress = clientAddress
        self.answer = answer
    }

    /// Called once, from any queue, by `OperationContext.reply`.
    package func finish(_ context: OperationContext, with result: Result<OperationContext.ReplyData, DomainError>) {
        let (reply, label) = OperationContext.message(for: context.requestID, result)
        answer(reply)
        app.metrics.requests.increment(label: label == "ok" ? context.successLabel : "\(context.operation):\(label)")
        let elapsed = ContinuousClock.now - context.started
        app.metrics.requestLatency.observe(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds),
                                           label: context.operation)
    }
}

