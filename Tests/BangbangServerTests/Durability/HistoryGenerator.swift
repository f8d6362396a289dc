// Not a test: fills a data directory with a large order history for the durability benchmarks
// (snapshot time and size, recovery time). Runs only when BANGBANG_BENCH_HISTORY_DIR names a
// directory that does not exist yet; BANGBANG_BENCH_HISTORY_ORDERS sets the count (default
// 1,000,000). Every order goes through the real commit path (decide → apply → journal); nine in
// ten are cancelled by their publisher straight away, so most of the history is closed orders.
import BangbangCore
import Foundation
import Journal
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct HistoryGenerator {
    static let directory = ProcessInfo.processInfo.environment["BANGBANG_BENCH_HISTORY_DIR"]

    @Test(.enabled(if: directory != nil, "set BANGBANG_BENCH_HISTORY_DIR to generate a benchmark history"))
    func generateHistory() async throws {
        let directory = try #require(Self.directory)
        #expect(!FileManager.default.fileExists(atPath: directory), "refusing to add to an existing directory")
        let count = Int(ProcessInfo.processInfo.environment["BANGBANG_BENCH_HISTORY_ORDERS"] ?? "") ?? 1_000_000
        var configuration = ServerConfiguration()
        configuration.dataDirectory = directory
        configuration.fsyncPolicy = .never
        configuration.snapshotIntervalSeconds = 86_400
        let logger = Logger(level: .warning)
        let app = try Application(configuration: configuration, logger: logger, metrics: ServerMetrics(),
                                  clock: WallClock.now, sms: DevelopmentSMSProvider(logger: logger, revealsCodes: true))

        // A couple hundred publishers, registered through the login path.
        let users: [UserID] = await withCheckedContinuation { continuation in
            app.accounts.perform { owner in
                var random = SystemRandomNumberGenerator()
                var users: [UserID] = []
                for index in 0..<200 {
                    let now = app.clock()
                    let phone = "+86137\(String(format: "%08d", index))"
                    guard let issue = try? owner.store.decideCodeRequest(phone: phone, purpose: .login, requester: nil,
                                                                            clientIP: "10.1.\(index / 256).\(index % 256)", now: now, using: &random)
                    else { continue }
                    owner.store.apply(.codeIssued(issue))
                    let decision = owner.store.decideCodeLogin(phone: phone, code: issue.code, device: "bench", now: now, using: &random)
                    for event in decision.throttle { owner.store.apply(event) }
                    guard case .success(let event) = decision.outcome, let session = event.openedSession else { continue }
                    owner.commit(event, at: now)
                    users.append(session.user)
                }
                continuation.resume(returning: users)
            }
        }
        #expect(users.count == 200)

        let perShard = (count + app.shards.count - 1) / app.shards.count
        let rules = app.orderRules
        await withTaskGroup(of: Void.self) { group in
            for owner in app.shards {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        owner.perform { owner in
                            var random = SystemRandomNumberGenerator()
                            for serial in 0..<perShard {
                                let now = app.clock()
                                let publisher = users[serial % users.count]
                                let draft = OrderDraft(campus: "north", deadline: now.adding(milliseconds: 7 * 24 * 3_600_000), tip: 300,
                                                       details: .bounty(BountyDetails(title: "Errand \(serial)",
                                                                                      description: "Benchmark history order on shard \(owner.shard.index)",
                                                                                      place: "Library")))
                                let draftForType: OrderDraft
                                if owner.type == .bounty { draftForType = draft } else {
                                    draftForType = OrderDraft(campus: "north", deadline: draft.deadline, tip: 300,
                                        details: Self.details(for: owner.type, serial: serial, now: now))
                                }
                                guard let published = try? owner.shard.decidePublish(draftForType, by: publisher, now: now,
                                                                                        rules: rules, using: &random) else { continue }
                                let applied = owner.commit(published)
                                guard serial % 10 != 0,
                                      let cancelled = try? owner.shard.decide(.cancel(reason: nil), on: applied.after.id, by: publisher,
                                                                                 now: now, rules: rules) else { continue }
                                owner.commit(cancelled)
                            }
                            continuation.resume()
                        }
                    }
                }
            }
        }
        try app.journal.close()
    }

    static func details(for type: OrderType, serial: Int, now: Timestamp) -> OrderDetails {
        switch type {
        case .express:
            .express(ExpressDetails(pickupStation: "Cainiao station 3", pickupCode: "8-2-\(serial % 10_000)", parcelSize: .medium,
                                    dropOffPlace: "Dorm 7", dropOffRoom: "512", contactPhone: "+8613812345678"))
        case .purchase:
            .purchase(PurchaseDetails(items: [PurchaseItem(name: "Oat milk", quantity: 2)], store: nil, goodsBudget: 2_000,
                                      dropOffPlace: "Library", dropOffRoom: "B2-14"))
        case .group:
            .group(GroupDetails(kind: .carpool, subject: "Campus to airport", closesAt: now.adding(milliseconds: 6 * 24 * 3_600_000),
                                capacity: 3, minimumFill: nil, pricePerShare: 3_000))
        case .bounty:
            .bounty(BountyDetails(title: "Errand \(serial)", description: "Benchmark history order", place: "Library"))
        }
    }
}
