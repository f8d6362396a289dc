// A real `Application` on a temporary data directory, driven the way the operations drive it:
// decide → commit on the owner's queue, waiting for the durable completion. A settable
// clock, a switch that makes the journal's writes fail with ENOSPC, and the log lines.
import BangbangCore
import Foundation
import Journal
import NATSClient
import OrderArchive
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage
import Synchronization

final class TestClock: Sendable {
    static let start = Timestamp(milliseconds: 1_767_225_600_000)  // 2026-01-01T00:00:00Z
    private let current = Mutex(TestClock.start)
    var now: Timestamp { current.withLock { $0 } }
    func advance(milliseconds: Int64) { current.withLock { $0 = $0.adding(milliseconds: milliseconds) } }
}

enum Drafts {
    static let hour: Int64 = 3_600_000

    static func express(now: Timestamp, code: Bool = false, tip: Cents = 300) -> OrderDraft {
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: hour), tip: tip, wantsDeliveryCode: code,
                   details: .express(ExpressDetails(pickupStation: "Cainiao station 3", pickupCode: "8-2-1043",
                                                    parcelSize: .medium, dropOffPlace: "Dorm 7",
                                                    dropOffRoom: "512", contactPhone: "+8613812345678")))
    }

    static func bounty(now: Timestamp, deadlineIn: Int64 = hour) -> OrderDraft {
        OrderDraft(campus: "south", deadline: now.adding(milliseconds: deadlineIn), tip: 500,
                   details: .bounty(BountyDetails(title: "Lost umbrella", description: "Black, near the gym", place: "Gym")))
    }

    static func purchase(now: Timestamp) -> OrderDraft {
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: hour), tip: 200,
                   details: .purchase(PurchaseDetails(items: [PurchaseItem(name: "Oat milk", quantity: 2)], store: nil,
                                                      goodsBudget: 2_000, dropOffPlace: "Library", dropOffRoom: "B2-14")))
    }

    static func group(now: Timestamp, capacity: Int = 3) -> OrderDraft {
        OrderDraft(campus: "north", deadline: now.adding(milliseconds: 2 * hour), tip: 0,
                   details: .group(GroupDetails(kind: .carpool, subject: "Campus to airport",
                                                closesAt: now.adding(milliseconds: hour), capacity: capacity,
                                                minimumFill: nil, pricePerShare: 3_000)))
    }
}

/// A new empty directory under the system's temporary directory.
func makeTemporaryDirectory(_ prefix: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

final class HarnessState: Sendable {
    /// While true, every journal write and sync fails with ENOSPC.
    let isDiskFull = Mutex(false)
    /// Where every archive write fails, while set (the archive's fault points).
    let archiveFault = Mutex<ArchiveFaultPoint?>(nil)
    let logLines = Mutex<[String]>([])
}

final class ApplicationHarness: @unchecked Sendable {
    static let adminPhone = "+8613000000000"

    let directory: String
    let clock = TestClock()
    /// The disk switch and the log lines, shared with the application's closures (which must
    /// not keep the harness alive).
    let state = HarnessState()
    var configuration = ServerConfiguration()
    private(set) var app: Application!

    /// With `cluster`, the application commits to that journal instead of the data directory's
    /// (as a node of a cluster does), and `configuration` names a NATS server.
    let cluster: ApplicationStorage?

    init(shardsPerType: Int = 1, cluster: ApplicationStorage? = nil) throws {
        self.cluster = cluster
        directory = try makeTemporaryDirectory("bangbang-durability")
        if cluster != nil { configuration.natsServers = ["nats://127.0.0.1:4222"] }
        configuration.dataDirectory = directory + "/data"
        configuration.fsyncPolicy = .never
        configuration.shardsPerType = shardsPerType
        configuration.snapshotIntervalSeconds = 86_400
        configuration.adminPhones = [Self.adminPhone]
        app = try open()
    }

    deinit {
        app?.tracking.withLock { $0.isShuttingDown = true }
        try? app?.closeJournals()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func open() throws -> Application {
        let state = state
        let logger = Logger(level: .debug, sink: { line in state.logLines.withLock { $0.append(line) } })
        let clock = clock
        let local = ApplicationStorage.dataDirectory(configuration, logger: logger, writerStartQueue: nil,
            journalTestHook: { $0.simulateFullDisk(when: { state.isDiskFull.withLock { $0 } }) },
            archiveFaultInjection: { point throws(ArchiveError) in
                if state.archiveFault.withLock({ $0 }) == point { throw .storageUnavailable("injected at \(point)") }
            })
        return try Application(configuration: configuration, logger: logger, metrics: ServerMetrics(),
                               clock: { clock.now }, sms: DevelopmentSMSProvider(logger: logger, revealsCodes: true),
                               storage: cluster ?? local)
    }

    /// Stops the application the way a crash leaves the disk (every completed record is there,
    /// no final snapshot) or a graceful shutdown does, and recovers a new one from the directory.
    /// `whileStopped` runs between the two, on the data directory with no server on it.
    func restart(gracefully: Bool = false, whileStopped: () throws -> Void = {}) throws {
        if gracefully {
            app.writeFinalSnapshot()
        } else {
            app.tracking.withLock { $0.isShuttingDown = true }
        }
        try app.closeJournals()
        state.logLines.withLock { $0.removeAll() }
        app = nil
        try whileStopped()
        app = try open()
    }

    func logged(_ event: String) -> [String] {
        state.logLines.withLock { lines in lines.filter { $0.contains("event=\(event) ") || $0.hasSuffix("event=\(event)") } }
    }

    // MARK: Changes through the commit point

    /// Decides an account change on the accounts queue (`decide` may apply unjournaled events such
    /// as issued codes), commits it on its owner, and returns once the journal has answered.
    @discardableResult
    func changeAccounts(_ decide: @escaping @Sendable (inout AccountStore, Timestamp) throws -> AccountEvent) async throws -> AccountEvent {
        let app = app!
        let now = clock.now
        let result: Result<AccountEvent, any Error> = await withCheckedContinuation { continuation in
            app.accounts.perform { owner in
                let event: AccountEvent
                do { event = try decide(&owner.store, now) } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                owner.commit(event, at: now) { outcome in
                    continuation.resume(returning: outcome.map { event }.mapError { $0 })
                }
            }
        }
        return try result.get()
    }

    /// Registers (or logs in) the owner of `phone` with an SMS code; returns the user.
    @discardableResult
    func logIn(_ phone: String) async throws -> UserID {
        let event = try await loginEvent(phone)
        guard let session = event.openedSession else { throw JournalEntryError(message: "no session opened") }
        return session.user
    }

    private func loginEvent(_ phone: String) async throws -> AccountEvent {
        let app = app!
        let now = clock.now
        let result: Result<AccountEvent, any Error> = await withCheckedContinuation { continuation in
            app.accounts.perform { owner in
                var random = SystemRandomNumberGenerator()
                do {
                    // One address per phone: the per-network limit is not what these tests are about.
                    let digits = UInt64(phone.filter(\.isNumber).suffix(6)) ?? 0
                    let address = "10.\(digits / 65_536 % 256).\(digits / 256 % 256).\(digits % 256)"
                    let issue = try owner.store.decideCodeRequest(phone: phone, purpose: .login, requester: nil,
                                                                     clientIP: address, now: now, using: &random)
                    owner.store.apply(.codeIssued(issue))
                    let decision = owner.store.decideCodeLogin(phone: phone, code: issue.code, device: "test", now: now, using: &random)
                    for event in decision.throttle { owner.store.apply(event) }
                    let event = try decision.outcome.get()
                    owner.commit(event, at: now) { outcome in
                        continuation.resume(returning: outcome.map { event }.mapError { $0 })
                    }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Decides an order change on shard `index`, commits it on its owner, and returns the change
    /// once the journal has answered.
    @discardableResult
    func changeShard(_ index: Int, _ decide: @escaping @Sendable (BoardShard, Timestamp) throws -> OrderEvent) async throws -> AppliedOrderChange {
        let app = app!
        let now = clock.now
        let result: Result<AppliedOrderChange, any Error> = await withCheckedContinuation { continuation in
            app.shards[index].perform { owner in
                let event: OrderEvent
                do { event = try decide(owner.shard, now) } catch {
                    continuation.resume(returning: .failure(error))
                    return
                }
                owner.commit(event) { outcome in
                    continuation.resume(returning: outcome.map(\.change).mapError { $0 })
                }
            }
        }
        return try result.get()
    }

    func publish(_ draft: OrderDraft, by user: UserID) async throws -> OrderID {
        let index = app.layout.shards(of: draft.type).lowerBound
        let rules = app.orderRules
        return try await changeShard(index) { shard, now in
            var random = SystemRandomNumberGenerator()
            return try shard.decidePublish(draft, by: user, now: now, rules: rules, using: &random)
        }.after.id
    }

    @discardableResult
    func run(_ command: OrderCommand, on id: OrderID, by user: UserID) async throws -> AppliedOrderChange {
        let rules = app.orderRules
        return try await changeShard(id.shard) { shard, now in
            try shard.decide(command, on: id, by: user, now: now, rules: rules)
        }
    }

    // MARK: Reading owner state

    func accountState() async -> AccountState {
        let app = app!
        return await withCheckedContinuation { continuation in
            app.accounts.perform { continuation.resume(returning: $0.store.state) }
        }
    }

    func shardStates() async -> [BoardShard] {
        var states: [BoardShard] = []
        for owner in app.shards {
            states.append(await withCheckedContinuation { continuation in
                owner.perform { continuation.resume(returning: $0.shard) }
            })
        }
        return states
    }

    func order(_ id: OrderID) async -> Order? {
        await withCheckedContinuation { continuation in
            app.shards[id.shard].perform { continuation.resume(returning: $0.shard.order(id)) }
        }
    }

    /// Waits (bounded) until `condition` holds, and records what never happened if it does not.
    func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        if try await TestSupport.eventually(condition) { return }
        Issue.record("timed out waiting until \(what)")
    }

    /// A completed express order of `publisher`, run by `runner`.
    func completedOrder(publisher: UserID, runner: UserID, tip: Cents = 300) async throws -> OrderID {
        let id = try await publish(Drafts.express(now: clock.now, tip: tip), by: publisher)
        try await run(.accept(isVerifiedRunner: true), on: id, by: runner)
        try await run(.pickUp, on: id, by: runner)
        try await run(.deliver(code: nil), on: id, by: runner)
        try await run(.confirm, on: id, by: publisher)
        return id
    }

    /// The revision the shard's owner knows the archive holds of `id`.
    func archivedRevision(_ id: OrderID) async -> Int? {
        await withCheckedContinuation { continuation in
            app.shards[id.shard].perform { continuation.resume(returning: $0.archivedRevisions[id]) }
        }
    }

    /// One archive sweep of every shard, as the timer runs it; returns the orders moved, once
    /// their moves are durable.
    @discardableResult
    func sweepArchive() async throws -> Int {
        var moved = 0
        for owner in app.shards {
            let rules = app.orderRules
            moved += await withCheckedContinuation { continuation in
                owner.perform { continuation.resume(returning: $0.moveArchivedOrders(rules: rules)) }
            }
        }
        // Each move was appended (counted in flight) inside the block that decided it.
        try await eventually("the moves are durable") { app.tracking.withLock { $0.inFlight } == 0 }
        return moved
    }

    /// Waits (bounded) until memory has been rebuilt after a storage failure.
    func waitForRebuild() async throws {
        let app = app!
        if await TestSupport.eventually({ !app.tracking.withLock { $0.isRebuildPending } }) { return }
        Issue.record("memory was not rebuilt after the storage failure")
    }

    /// A snapshot now, in the background path's two steps, waiting for it to be written.
    @discardableResult
    func snapshot() -> SnapshotCut? {
        guard let cut = app.maintenanceQueue.sync(execute: { app.takeSnapshotCut() }) else { return nil }
        let written = app.snapshotQueue.sync { app.writeSnapshot(cut, reason: "test") }
        return written ? cut : nil
    }
}
