// How a committed record's personal events reach the account partitions that number them. A source
// (a board partition `p<n>`, or an account partition `a<n>` for its own events) hands over each
// durable record's events in journal order; each account partition's `AccountPublisher` receives
// them in its inbox's order. Between nodes that is the inbox stream, with the outbox's numbering
// and the reader's rule (InboxProtocol). In one process nothing between the two can be lost,
// doubled or reordered, so `LocalInbox` hands each record's events over at once, on the publishing
// queue, in the order the journal completed them.
import InboxProtocol

package protocol PersonalEventRoute: Sendable {
    /// The personal events of the durable record `journalSequence` of `source`, in journal order.
    /// `received`, when given, runs once the account half has numbered them (what must follow a
    /// user's own event waits for it: a login's reply carries the position that includes its
    /// `account.login`); it is given only for an account partition's own record, whose events
    /// are its own users'.
    func send(_ events: [InboxEvent], from source: InboxSource, journalSequence: UInt64, at: Int64,
              received: (@Sendable () -> Void)?)
}

/// Every user in one account partition, in this process.
package struct LocalInbox: PersonalEventRoute {
    package let accounts: AccountPublisher

    package func send(_ events: [InboxEvent], from source: InboxSource, journalSequence: UInt64, at: Int64,
              received: (@Sendable () -> Void)?) {
        accounts.receive(events, at: at)
        received?()
    }
}
