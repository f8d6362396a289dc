// What a connection tells the app without being asked: its personal stream (in order, once),
// when to refetch, the end of the session, and the connection's state. And the board feed.

/// One thing the app should know about.
public enum ConnectionUpdate: Sendable, Hashable {
    /// The next event of the logged-in user's personal stream.
    case event(PersonalEvent)
    /// Events were missed beyond what the server keeps (or the server's history was reset):
    /// refetch what you show (`MyOrders`, `GetOrder`); the stream continues after this.
    case resyncNeeded
    /// The session is over and forgotten: show the login screen. The connection stays up for
    /// the next login.
    case loggedOut(LogoutReason)
    case stateChanged(ConnectionState)
}

/// The connection's updates, for one `for await` loop in the app.
///
/// An event counts as processed — and its `seq` is saved in the session store, so the next
/// launch resumes after it — when the loop asks for the next update. An app killed while
/// handling an event gets that event again at the next launch; one killed while waiting does not.
public struct ConnectionUpdates: AsyncSequence, Sendable {
    public typealias Element = ConnectionUpdate

    let stream: AsyncStream<Delivery>
    let relay: AcknowledgementRelay

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), relay: relay)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Delivery>.Iterator
        let relay: AcknowledgementRelay
        var unacknowledged: Acknowledgement?

        public mutating func next() async -> ConnectionUpdate? {
            if let done = unacknowledged {
                unacknowledged = nil
                await relay.acknowledge(done)
            }
            guard let delivery = await base.next() else { return nil }
            unacknowledged = delivery.acknowledgement
            return delivery.update
        }
    }
}

/// An update as queued, with the stream position to save once the app has handled it.
struct Delivery: Sendable {
    var update: ConnectionUpdate
    var acknowledgement: Acknowledgement?
}

struct Acknowledgement: Sendable, Hashable {
    /// The session the event was delivered under: a later login's position is never overwritten.
    var token: String
    var seq: Int64
}

/// Carries acknowledgements from the app's loop back to its connection (set once, right after
/// the connection is made; the iterator may outlive it).
final class AcknowledgementRelay: @unchecked Sendable {
    // Confinement: `connection` is written once during the connection's init, before the
    // updates can be iterated, and only read afterwards.
    weak var connection: BangbangConnection?

    func acknowledge(_ acknowledgement: Acknowledgement) async {
        await connection?.acknowledge(acknowledgement)
    }
}

/// What the board feed of the connection's subscription reports.
public enum BoardFeedUpdate: Sendable, Hashable {
    /// A subscription's list: after `SubscribeBoard`, and again after every reconnect.
    case subscribed(BoardSnapshot, filter: BoardFilter)
    /// The next change, in feed order, never one already reflected in the list.
    case event(BoardFeedEvent)
    /// The connection dropped: the list may be stale until the next `subscribed`.
    case interrupted
    /// The subscription ended: `UnsubscribeBoard`, a logout, or a renewal the server refused.
    case unsubscribed
}
