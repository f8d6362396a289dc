// What one durable change tells people, encoded on its owner's queue so the publishing queue only
// numbers and hands out bytes. Its personal events are already in the inbox's form (one
// `InboxEvent` per recipient: the event's name and its `data`, encoded for that recipient),
// because they leave the partition that committed the change and are numbered by the account
// partition of each recipient; the board change stays with the board partition.
import BangbangCore
import BangbangProtocol
import InboxProtocol

/// One viewer's view of an order, encoded (`OrderWire.encoded`).
package struct EncodedOrderView: Sendable {
    let viewer: UserID
    let json: [UInt8]
}

package struct Announcement: Sendable {
    /// A change to an order: the board's numbering moves, and watchers may be told.
    package struct BoardChange: Sendable {
        let change: AppliedOrderChange
        /// The feed's `data` when the order is still listed, and when it leaves a view; nil when
        /// nobody watched any board as the owner encoded it (the publisher encodes them if
        /// someone started since).
        let feedData: FeedBroadcast.Data?
    }

    package let at: Timestamp
    var personal: [InboxEvent] = []
    var board: BoardChange?
    /// A runner verification decided: who, and whether they may now accept orders.
    var runnerDecision: (user: UserID, isApproved: Bool)?

    init(_ event: AccountEvent, at now: Timestamp) {
        at = now
        if case .verificationDecided(let decision) = event {
            runnerDecision = (decision.user, decision.isApproved)
        }
        guard let (name, data) = AccountNotifications.describe(event) else { return }
        let encoded = JSONWriter.encode(data)
        personal = event.recipients.map { InboxEvent(user: $0.rawValue, name: name, data: encoded) }
    }

    /// `actorView`, when given, is reused for its viewer's own event.
    /// A move to the archive tells nobody and leaves the board's numbering as it was (it is
    /// replayed through here too, so live and recovered numbering agree).
    init(_ applied: AppliedOrderChange, actorView: EncodedOrderView?, includingFeed: Bool) {
        at = applied.event.at
        if case .movedToArchive = applied.event.change { return }
        let order = applied.after
        let change = OrderNotifications.changeName(applied.event.change)
        personal = applied.event.notify.map { user in
            let data = if let actorView, actorView.viewer == user {
                OrderWire.changedData(change: change, encodedView: actorView.json)
            } else {
                OrderWire.changedData(change: change, view: OrderView(order, viewer: user))
            }
            return InboxEvent(user: user.rawValue, name: "order.changed", data: data)
        }
        board = BoardChange(change: applied, feedData: includingFeed ? FeedBroadcast.Data(order) : nil)
    }
}
