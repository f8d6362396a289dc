// `bangbang admin` on a stopped server's data directory. The command line (Sources/bangbang/Admin/)
// parses and prints; what runs here is server logic, so it stays beside the server. It recovers the application exactly as
// the server does at start (taking the directory's lock, so a server cannot start meanwhile),
// runs one command on the owners' queues as the built-in administrator, commits a change
// through its owner's `commit` (the server's one commit path: journaled and fsynced before the
// CLI reports success) and closes the journal. The next server start replays the record like
// any other, so the person concerned is told when they reconnect.
import BangbangCore
import BangbangProtocol
import Dispatch
import Journal
import Synchronization

/// A refusal from the server (or from the offline run), with the protocol's error code.
package struct AdminReplyError: Error, Sendable, Equatable {
    package var code: String
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}

package enum OfflineAdmin {
    /// What a stopped server's data directory can be asked: the administrator's requests.
    package enum Action: Sendable, Equatable {
        case pendingVerifications
        case approve(user: Int64)
        case reject(user: Int64, reason: String)
        case feedback(limit: Int64?, before: Int64?)
        case user(id: Int64)
        case userByPhone(String)
        case order(id: Int64)
        case grantAdmin(user: Int64)
        case revokeAdmin(user: Int64)
    }

    /// Runs `command`; throws when the data directory cannot be opened (locked: the server runs).
    package static func run(_ command: Action, configuration: ServerConfiguration,
                            logger: Logger) throws -> Result<JSONValue, AdminReplyError> {
        let app = try Application(configuration: configuration, logger: logger, metrics: ServerMetrics(),
                                  clock: WallClock.now, sms: DevelopmentSMSProvider(logger: logger, revealsCodes: false))
        defer {
            do { try app.closeJournals() } catch { logger.error("journal_close_failed", ["error": "\(error)"]) }
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<JSONValue, AdminReplyError>?>(nil)
        let finish: @Sendable (Result<JSONValue, DomainError>) -> Void = { result in
            outcome.withLock { $0 = result.mapError { AdminReplyError(code: $0.code.rawValue, message: $0.message) } }
            done.signal()
        }
        execute(command, app: app, finish: finish)
        done.wait()
        guard let result = outcome.withLock({ $0 }) else {
            fatalError("internal inconsistency in OfflineAdmin: finished without a result")
        }
        return result
    }

    private static func execute(_ command: Action, app: Application,
                                finish: @escaping @Sendable (Result<JSONValue, DomainError>) -> Void) {
        switch command {
        case .pendingVerifications:
            app.accounts.perform { owner in
                finish(.success(["users": .array(BuiltInAdministrator.pendingVerifications(owner.store).map(UserWire.encode))]))
            }
        case .feedback(let limit, let before):
            app.accounts.perform { owner in
                let page = BuiltInAdministrator.feedbackPage(owner.store, before: before.map { UInt64($0) },
                                                             limit: Int(min(limit ?? 20, 100)))
                finish(.success(page.map(FeedbackWire.encode) ?? ["feedback": []]))
            }
        case .user(let id):
            app.accounts.perform { owner in
                finish(Result { () throws(DomainError) in
                    ["user": UserWire.encode(try BuiltInAdministrator.user(owner.store, UserID(rawValue: UInt64(id))))]
                })
            }
        case .userByPhone(let phone):
            app.accounts.perform { owner in
                finish(Result { () throws(DomainError) in
                    ["user": UserWire.encode(try BuiltInAdministrator.user(owner.store, phone: phone))]
                })
            }
        case .order(let raw):
            let id = OrderID(rawValue: UInt64(raw))
            guard app.shards.indices.contains(id.shard) else { return finish(.failure(DomainError(.notFound, "no such order"))) }
            app.shards[id.shard].perform { owner in
                guard let order = owner.shard.orders[id] else { return finish(.failure(DomainError(.notFound, "no such order"))) }
                finish(.success(["order": OrderWire.encode(OrderView(order, viewer: order.publisher))]))
            }
        case .approve(let user), .reject(let user, _), .grantAdmin(let user), .revokeAdmin(let user):
            let subject = UserID(rawValue: UInt64(user))
            app.accounts.perform { owner in
                let now = app.clock()
                let event: AccountEvent
                do throws(DomainError) {
                    switch command {
                    case .approve: event = try BuiltInAdministrator.decideVerification(owner.store, user: subject,
                                                                                        reason: nil, now: now)
                    case .reject(_, let reason):
                        event = try BuiltInAdministrator.decideVerification(owner.store, user: subject, reason: reason, now: now)
                    case .grantAdmin:
                        event = try BuiltInAdministrator.decideAdministrator(owner.store, user: subject, isGranted: true, now: now)
                    default:
                        event = try BuiltInAdministrator.decideAdministrator(owner.store, user: subject, isGranted: false, now: now)
                    }
                } catch {
                    return finish(.failure(error))
                }
                app.logger.info("admin_action", ["mode": "offline", "command": "\(command)", "subject": user])
                owner.commit(event, at: now, reading: { store in
                    Result { () throws(DomainError) in try BuiltInAdministrator.user(store, subject) }
                }, onDurable: { result in
                    switch result {
                    case .failure(let error), .success(.failure(let error)): finish(.failure(error))
                    case .success(.success(let user)): finish(.success(["user": UserWire.encode(user)]))
                    }
                })
            }
        }
    }
}
