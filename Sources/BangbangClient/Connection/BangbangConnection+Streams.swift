// BangbangConnection's session and personal stream (what a login, a resume and a logout change,
// each personal event in order) and the live board feed, as the connection receives them.
import JSON

extension BangbangConnection {
    // MARK: The session and the personal stream

    func apply(_ effect: RequestEffect.Kind, reply data: JSONValue) throws(DecodingFailure) {
        switch effect {
        case .none:
            break
        case .logIn:
            let login = try LoginResult(wire: data, at: [])
            let session = StoredSession(token: login.token, userID: login.user.id.rawValue, lastSeq: login.seq)
            authentication = .user(session)
            user = login.user
            position = PersonalStreamPosition(delivered: login.seq)
            try? store.save(session)
            let held = heldEvents
            heldEvents.removeAll()
            for event in held { receivePersonal(event) }
        case .logOut:
            endSession(.loggedOut)
        case .administrator(let secret):
            authentication = .administrator(secret: secret)
            user = nil
        case .subscribe(let filter, let limit):
            subscription = Subscription(filter: filter, limit: limit)
            startFeed(try BoardSnapshot(wire: data, at: []), filter: filter)
        case .unsubscribe:
            subscription = nil
            feed = .idle
            emitFeed(.unsubscribed)
        }
    }

    func endSession(_ reason: LogoutReason) {
        let hadSession: Bool
        if case .none = authentication { hadSession = false } else { hadSession = true }
        authentication = .none
        user = nil
        position = PersonalStreamPosition(delivered: 0)
        try? store.save(nil)
        if subscription != nil {
            subscription = nil
            feed = .idle
            emitFeed(.unsubscribed)
        }
        if hadSession { updateSink.yield(Delivery(update: .loggedOut(reason), acknowledgement: nil)) }
    }

    func receivePersonal(_ event: PersonalEvent) {
        guard case .user(let session) = authentication else {
            if loginsInFlight > 0 { heldEvents.append(event) }
            return
        }
        switch position.admit(event.seq) {
        case .deliver:
            updateSink.yield(Delivery(update: .event(event),
                                      acknowledgement: Acknowledgement(token: session.token, seq: event.seq)))
            if case .loggedOut = event.kind { Task { await self.checkSession() } }
        case .duplicate:
            break
        case .gap(let expected):
            _ = drop(generation, because: "personal event \(event.seq) arrived before \(expected): resuming to fill the gap")
        }
    }

    /// `account.logged_out` does not say which session ended; ask whether this one still works.
    func checkSession() async {
        guard isOnline, logoutsInFlight == 0, case .user = authentication else { return }
        let result = await exchange("auth.sessions", nil, generation: generation)
        if case .failure(.server(let error)) = result, error.code == .unauthenticated, logoutsInFlight == 0,
           case .user = authentication {
            endSession(.revoked)
        }
    }

    /// The app has processed the event at `seq` (or a resync to it): save the position, if the
    /// session is still the one it was delivered under. Acknowledgements come in delivery order.
    func acknowledge(_ acknowledgement: Acknowledgement) {
        guard case .user(var session) = authentication, session.token == acknowledgement.token,
              acknowledgement.seq != session.lastSeq else { return }
        session.lastSeq = acknowledgement.seq
        authentication = .user(session)
        try? store.save(session)
    }

    // MARK: The board feed

    func receiveBoard(_ event: BoardFeedEvent) {
        switch feed {
        case .idle:
            break
        case .subscribing(var buffer):
            buffer.append(event)
            feed = .subscribing(buffer: buffer)
        case .live(var positions):
            // Boards the subscription does not watch (the one it replaced did), and events the
            // list already reflects, are not news.
            guard let position = positions[event.board], event.seq > position else { return }
            positions[event.board] = event.seq
            feed = .live(positions: positions)
            emitFeed(.event(event))
        }
    }

    func startFeed(_ snapshot: BoardSnapshot, filter: BoardFilter) {
        var buffered: [BoardFeedEvent] = []
        if case .subscribing(let buffer) = feed { buffered = buffer }
        feed = .live(positions: snapshot.seq)
        emitFeed(.subscribed(snapshot, filter: filter))
        for event in buffered { receiveBoard(event) }
    }

    func emitFeed(_ update: BoardFeedUpdate) {
        for sink in feedSinks.values { sink.yield(update) }
    }

    func removeFeed(_ id: Int) {
        feedSinks.removeValue(forKey: id)
    }
}
