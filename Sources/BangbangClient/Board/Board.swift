// Board: the open orders of a subscription, live. It listens to its connection's board feed and
// feeds BoardState (the rules live there); the connection renews the subscription after every
// reconnect, and the renewed list replaces this one.

/// A live list of open orders for a filter; make one with `BangbangConnection.watchBoard`.
public actor Board {
    public nonisolated let filter: BoardFilter
    /// Every state the list goes through: after the first list, each change, each interruption
    /// and each renewal. Ends when the board stops (`stop()`, a logout, or a newer subscription
    /// with another filter on the same connection).
    public nonisolated let changes: AsyncStream<BoardState>

    public private(set) var state: BoardState
    private let sink: AsyncStream<BoardState>.Continuation
    private let connection: BangbangConnection
    private var listener: Task<Void, Never>?
    private var isStopped = false

    init(filter: BoardFilter, connection: BangbangConnection) {
        self.filter = filter
        self.connection = connection
        state = BoardState(filter: filter)
        (changes, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    func start(listening feed: AsyncStream<BoardFeedUpdate>) {
        listener = Task { [weak self] in
            for await update in feed {
                guard let self else { return }
                await self.apply(update)
            }
        }
    }

    /// The open orders, sorted as the filter asks.
    public var orders: [Order] { state.orders }

    /// Stops the feed (`board.unsubscribe`) and ends `changes`.
    public func stop() async {
        guard !isStopped else { return }
        end()
        _ = try? await connection.send(UnsubscribeBoard())
    }

    func apply(_ update: BoardFeedUpdate) {
        guard !isStopped else { return }
        switch update {
        case .subscribed(let snapshot, let filter):
            guard filter == self.filter else {
                end()  // another subscription replaced ours on this connection
                return
            }
            state.reset(to: snapshot)
            sink.yield(state)
        case .event(let event):
            if state.apply(event) { sink.yield(state) }
        case .interrupted:
            state.interrupt()
            sink.yield(state)
        case .unsubscribed:
            end()
        }
    }

    private func end() {
        isStopped = true
        listener?.cancel()
        sink.finish()
    }
}
