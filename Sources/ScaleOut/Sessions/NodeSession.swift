// One `/ws` connection's session on a cluster node that owns no partition, run here instead of
// being relayed whole to the owner (`--cluster-sessions node`), so that it outlives the owner's
// death. Each request goes where it is decided: to the owner of the partition it concerns, over
// NATS (NodeRouter), whose reply is passed on byte for byte; `board.subscribe` to every board
// partition, merged here and followed from the feed subjects (FollowedBoards); with several pairs,
// what spans them read from each and merged here (`spanPartitions`); `info.get` is answered here. A
// login or a resume is the account owner's, and the node follows the user's stream from where the
// reply says (FollowedStreams, RemoteLogin). The owner never sees the connection, so what it does
// to a connection of its own the node does here: a logout of this session ends the login once
// answered; a runner's verification decided changes the actor sent with each request; an
// `account.logged_out` is checked with the owner (`auth.sessions`), and a session it no longer
// knows is logged out here.
//
// When a routed request gets no answer, or the events followed for the user are lost, the
// connection is closed with 1012 and the client resumes, as after an owner change. A new owner
// does not end the session: routed requests wait for it within the route's bound, and the
// followed streams ask it for what its recovery numbered.
//
// Confined to its connection's loop (`outbox.loop`); what other queues have for it arrives
// through the outbox, in order.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import PartitionOwner
import SocketServer
import WebSocketProtocol
import WebSocketServer

package final class NodeSession: WebSocketEndpoint, @unchecked Sendable {
    /// A request of the client's in flight: what its reply is for once back on the loop, and what
    /// the request counters need.
    package struct Pending: Sendable {
        enum Purpose: Sendable {
            /// A reply passed on.
            case reply
            /// A login or a resume (with the token and the device's `last_seq` it sent).
            case login(token: String?, lastSeen: UInt64?)
            /// A logout or revocation of `session`: this connection's own ends once answered ok.
            case logout(SessionID)
            /// The check after an `account.logged_out`: not the client's request, nothing is sent.
            case sessionCheck
            /// `auth.admin_secret`: answered ok, the connection is the built-in administrator's.
            case adminSecret
        }

        let purpose: Purpose
        package let operation: String
        let started: ContinuousClock.Instant
    }

    private struct Login {
        package var user: UserID
        package var session: SessionID
        package var isApprovedRunner: Bool
        /// The handle of the device following the user's stream here.
        var device: UInt64
    }

    let hub: NodeSessionHub
    package let outbox: NodeOutbox
    private var channel: WebSocketChannel?
    private var login: Login?
    /// Logged in with the node's admin secret: `admin.*` operations only, as the built-in administrator.
    private var isBuiltInAdministrator = false
    private var isClosed = false
    /// Set when the connection opens, with this node's request rate.
    private var admission = RequestAdmission(requestsPerSecond: 0, now: 0)

    init(hub: NodeSessionHub, outbox: NodeOutbox) {
        self.hub = hub
        self.outbox = outbox
    }

    // MARK: WebSocketEndpoint

    package func webSocketDidOpen(_ channel: WebSocketChannel) {
        self.channel = channel
        hub.metrics.relay.nodeSessions.add(1)
        admission = RequestAdmission(requestsPerSecond: hub.requestsPerSecond, now: channel.loop.now)
    }

    package func webSocket(_ channel: WebSocketChannel, didReceiveText bytes: [UInt8]) {
        switch bytes.withUnsafeBytes({ Request.decode($0) }) {
        case .failure(let failure):
            hub.metrics.requests.increment(label: "invalid:bad_request")
            channel.send(text: Reply.failure(id: failure.id, error: failure.error))
        case .success(let request):
            handle(request)
        }
    }

    package func webSocket(_ channel: WebSocketChannel, didReceiveBinary bytes: [UInt8]) {
        channel.close(code: .unsupportedData, reason: "this endpoint speaks JSON text messages only")
    }

    package func webSocketDidClose(_ channel: WebSocketChannel) {
        guard !isClosed else { return }
        isClosed = true
        self.channel = nil
        hub.metrics.relay.nodeSessions.add(-1)
        if let login { hub.streams.unfollow(login.device) }
        login = nil
        hub.unwatch(self)
    }

    // MARK: Requests

    /// Admits the request as a session on the owner does (RequestAdmission.swift), then sends it
    /// its way: answered here, watched here, or routed.
    private func handle(_ request: Request) {
        guard let channel, channel.isOpen else { return }
        let userLogin: RequestAdmission.Login = if let login { .user(login.user) } else if isBuiltInAdministrator { .builtInAdministrator } else { .none }
        let decision = admission.admit(request.operation, login: userLogin, users: hub.userLimiter, now: channel.loop.now)
        decision.count(in: hub.metrics, logger: hub.logger, connectionID: channel.connectionID, requestID: request.id, user: login?.user)
        let operation: Operation
        switch decision {
        case .ignore:
            return
        case .closeForFlooding:
            return channel.close(code: .policyViolation, reason: "request rate limit exceeded repeatedly")
        case .refuse(let error, _, _, _):
            return channel.send(text: Reply.failure(id: request.id, error: error))
        case .run(let admitted):
            operation = admitted
        }
        let started = ContinuousClock.now
        func refuse(_ error: DomainError) {
            admission.finish()
            hub.metrics.requests.increment(label: "\(operation.name):\(error.code.rawValue)")
            channel.send(text: Reply.failure(id: request.id, error: error))
        }
        do throws(DomainError) {
            switch operation.name {
            case InfoOperations.get.name:
                try Arguments(request.data).allowOnly([])
                hub.metrics.requests.increment(label: operation.successLabel)
                admission.finish()
                channel.send(text: Reply.success(id: request.id, encodedData: hub.info))
            case AuthOperations.adminSecret.name:
                let candidate = try AdminSecretLogin.candidate(try Arguments(request.data))
                try AdminSecretLogin.requireLoopback(channel.clientOrigin, connectionID: channel.connectionID,
                                                     metrics: hub.metrics, logger: hub.logger)
                let pending = Pending(purpose: .adminSecret, operation: operation.name, started: started)
                hub.checkAdminSecret(candidate, id: request.id, connectionID: channel.connectionID) { [self, outbox] outcome in
                    outbox.post(.routed(pending, outcome), to: self)
                }
            case BoardOperations.subscribe.name:
                let query = try BoardOperations.subscriptionQuery(try Arguments(request.data))
                hub.watch(for: self, requestID: request.id, data: request.data, query: query, runner: runner,
                          pending: Pending(purpose: .reply, operation: operation.name, started: started))
            case BoardOperations.unsubscribe.name:
                try Arguments(request.data).allowOnly([])
                hub.unwatch(self, reply: (Reply.success(id: request.id, data: [:]),
                                          Pending(purpose: .reply, operation: operation.name, started: started)))
            default:
                let pending = Pending(purpose: purpose(of: request), operation: operation.name, started: started)
                if try !spanPartitions(request, for: pending) { route(request, for: pending) }
            }
        } catch {
            refuse(error)
        }
    }

    /// What the reply is for. Read leniently: the owner checks the fields, and its refusal is
    /// the client's reply.
    private func purpose(of request: Request) -> Pending.Purpose {
        let data: [String: JSONValue] = if case .object(let members)? = request.data { members } else { [:] }
        switch request.operation {
        case AuthOperations.loginWithCode.name, AuthOperations.loginWithPassword.name:
            return .login(token: nil, lastSeen: nil)
        case AuthOperations.resume.name:
            guard case .string(let token)? = data["token"] else { return .reply }
            let lastSeen: UInt64? = if case .integer(let number)? = data["last_seq"], number >= 0 { UInt64(number) } else { nil }
            return .login(token: token, lastSeen: lastSeen)
        case AuthOperations.logout.name:
            return login.map { .logout($0.session) } ?? .reply
        case AuthOperations.revokeSession.name:
            guard case .string(let text)? = data["session_id"], let session = try? SessionWire.decodeID(text) else { return .reply }
            return .logout(session)
        default:
            return .reply
        }
    }

    /// With several pairs, what one owner cannot answer alone: `board.list` of every campus,
    /// `board.stats`, `orders.mine` and `runner.earnings`, read from every board partition
    /// (BoardReads, PairHistoryReads), and administration, checked with the administrator's own
    /// partition and sent where it is decided (PairAdministration). False for any other request,
    /// which goes to one owner.
    private func spanPartitions(_ request: Request, for pending: Pending) throws(DomainError) -> Bool {
        guard let reads = hub.boardReads else { return false }
        let reply: @Sendable ([UInt8]) -> Void = { [self, outbox] bytes in outbox.post(.reply(bytes, pending), to: self) }
        if let administration = hub.administration, let administrator = actor(),
           RoutedOperations.administrationNames.contains(request.operation) {
            administration.run(request, actor: administrator) { [self, outbox] outcome in
                outbox.post(.routed(pending, outcome), to: self)
            }
            return true
        }
        switch request.operation {
        case MyOrdersOperations.mine.name, MyOrdersOperations.earnings.name:
            guard let history = hub.historyReads, let user = login?.user else { return false }
            if request.operation == MyOrdersOperations.mine.name {
                let query = try MyOrdersOperations.MineQuery(try Arguments(request.data))
                history.mine(id: request.id, user: user, query: query, data: request.data, completion: reply)
            } else {
                try Arguments(request.data).allowOnly([])
                history.earnings(id: request.id, runner: user, completion: reply)
            }
        case BoardOperations.list.name:
            let query = try BoardWire.decodeListQuery(try Arguments(request.data))
            guard query.filter.campus == nil else { return false }
            reads.list(id: request.id, data: request.data, query: query, completion: reply)
        case BoardOperations.stats.name:
            try Arguments(request.data).allowOnly([])
            reads.stats(id: request.id, completion: reply)
        default:
            return false
        }
        return true
    }

    /// The operations whose routed actor names the connection's session: they concern it.
    private static let sessionOperations: Set<String> = [AuthOperations.sessions.name, AuthOperations.logout.name,
                                                         AuthOperations.revokeSession.name]

    /// Sends `request` to the owner of the partition that decides it, with who asks.
    private func route(_ request: Request, for pending: Pending) {
        let sendsSession = Self.sessionOperations.contains(request.operation)
        let address = RoutedOperations.loginOperations.contains(request.operation)
            ? channel.map { String($0.clientOrigin.address.description.prefix(RoutedRequest.maximumAddressLength)) } : nil
        let routed = RoutedRequest(id: request.id, operation: request.operation, data: request.data,
                                   actor: actor(withSession: sendsSession), clientAddress: address)
        let completion: @Sendable (NodeRouter.Outcome) -> Void = { [self, outbox] outcome in outbox.post(.routed(pending, outcome), to: self) }
        switch (hub.phoneMoves, request.operation) {
        case (let moves?, ProfileOperations.changePhone.name): moves.changePhone(routed, completion: completion)
        case (let moves?, AuthOperations.loginWithCode.name), (let moves?, AuthOperations.loginWithPassword.name):
            moves.logIn(routed, completion: completion)
        default: hub.router.route(routed, in: hub.map, completion: completion)
        }
    }

    /// Who asks, as the owner is told: the logged-in user (with the session, when the operation
    /// concerns it), the built-in administrator, or nobody.
    private func actor(withSession: Bool = false) -> RoutedActor? {
        if let login {
            return RoutedActor(user: login.user, isApprovedRunner: login.isApprovedRunner, session: withSession ? login.session : nil)
        }
        return isBuiltInAdministrator ? .builtInAdministrator : nil
    }

    // MARK: What the outbox brings

    /// One item another queue posted for this connection, on its loop.
    package func perform(_ item: NodeOutbox.Item) {
        guard let channel, !isClosed else { return }
        switch item {
        case .text(let bytes):
            channel.send(text: bytes)
        case .reply(let bytes, let pending):
            admission.finish()
            count(pending, bytes)
            channel.send(text: bytes)
        case .shared(let message):
            hub.metrics.pushesSent.increment()
            channel.send(shared: message)
        case .personal(let message, let change):
            hub.metrics.pushesSent.increment()
            channel.send(shared: message)
            if let change { apply(change) }
        case .routed(let pending, let outcome):
            finish(pending, outcome, on: channel)
        case .close(let code, let reason):
            channel.close(code: code, reason: reason)
        }
    }

    private func finish(_ pending: Pending, _ outcome: NodeRouter.Outcome, on channel: WebSocketChannel) {
        if case .sessionCheck = pending.purpose {} else { admission.finish() }
        let reply: [UInt8]
        switch outcome {
        case .close(let code, let reason):
            hub.metrics.requests.increment(label: "\(pending.operation):outcome_unknown")
            hub.logger.warning("routed_outcome_unknown", ["connection.id": channel.connectionID, "op": pending.operation,
                                                          "detail": "\(reason); the client is told 1012 to resume and look"])
            return channel.close(code: code, reason: reason)
        case .reply(let bytes):
            reply = bytes
        }
        if case .sessionCheck = pending.purpose {} else { count(pending, reply) }
        switch pending.purpose {
        case .reply:
            channel.send(text: reply)
        case .login(let token, let lastSeen):
            guard let remote = RemoteLogin.read(reply: reply, resumedWith: token) else { return channel.send(text: reply) }
            follow(remote, reply: reply, lastSeen: lastSeen)
        case .logout(let session):
            channel.send(text: reply)
            if login?.session == session, Reply.errorCode(of: reply) == nil { logOut() }
        case .sessionCheck:
            if Reply.errorCode(of: reply) == ErrorCode.unauthenticated.rawValue { logOut() }
        case .adminSecret:
            if Reply.errorCode(of: reply) == nil {
                logOut()
                isBuiltInAdministrator = true
            }
            channel.send(text: reply)
        }
    }

    /// Logs the connection in as the owner answered, and follows the user's stream from where the
    /// device stands; the reply goes out at its place in the stream (LoginReplyGate).
    private func follow(_ remote: RemoteLogin, reply: [UInt8], lastSeen: UInt64?) {
        if let previous = login { hub.streams.unfollow(previous.device) }
        let after = remote.followsAfter(lastSeen: lastSeen)
        let stream = DeviceStream(session: self, gate: LoginReplyGate(reply: reply, login: remote))
        // Queued before the follower's own work on the same queue: the gate starts first.
        hub.streams.queue.async { stream.start(after: after) }
        let device = hub.streams.follow(remote.user, after: after, sink: stream.sink)
        login = Login(user: remote.user, session: remote.session, isApprovedRunner: remote.isApprovedRunner, device: device)
        isBuiltInAdministrator = false
        // A watch kept across the login counts the new user, if a runner.
        hub.noteRunner(self, runner)
    }

    private func apply(_ change: AccountChange) {
        switch change {
        case .verificationDecided(let approved):
            login?.isApprovedRunner = approved
            hub.noteRunner(self, runner)
        case .loggedOut:
            guard login != nil else { return }
            route(Request(id: .integer(0), operation: AuthOperations.sessions.name, data: nil),
                  for: Pending(purpose: .sessionCheck, operation: AuthOperations.sessions.name, started: .now))
        }
    }

    /// The user, while logged in as an approved runner: counted among the runners online when watching.
    private var runner: UserID? {
        guard let login, login.isApprovedRunner else { return nil }
        return login.user
    }

    private func logOut() {
        if let login { hub.streams.unfollow(login.device) }
        login = nil
        isBuiltInAdministrator = false
        hub.unwatch(self)
    }

    /// The request counter and the latency histogram, as a session on the owner keeps them.
    private func count(_ pending: Pending, _ reply: [UInt8]) {
        let code = Reply.errorCode(of: reply)
        hub.metrics.requests.increment(label: code.map { "\(pending.operation):\($0)" } ?? "\(pending.operation):ok")
        let elapsed = ContinuousClock.now - pending.started
        hub.metrics.requestLatency.observe(Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds),
                                           label: pending.operation)
    }
}

/// One device's personal stream here, around its login reply: confined to the followed streams'
/// queue, where its sink is called.
private final class DeviceStream: @unchecked Sendable {
    // Confinement: `gate` is touched only on `FollowedStreams.queue`.
    private var gate: LoginReplyGate
    private let session: NodeSession

    init(session: NodeSession, gate: LoginReplyGate) {
        self.session = session
        self.gate = gate
    }

    package func start(after: UInt64) { post(gate.start(after: after)) }

    var sink: FollowedStreams.Sink {
        FollowedStreams.Sink(deliver: { [self] events in post(gate.pass(events)) }, lost: { [session] _ in
            session.outbox.post(.close(.serviceRestart, reason: "events of your stream were lost here; resume"), to: session)
        })
    }

    private func post(_ outputs: [LoginReplyGate.Output]) {
        for output in outputs {
            switch output {
            case .reply(let reply): session.outbox.post(.text(reply), to: session)
            case .event(let event): session.outbox.post(.personal(event.message, event.change), to: session)
            }
        }
    }
}
