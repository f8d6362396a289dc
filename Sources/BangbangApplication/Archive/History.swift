// History: the answers that reach closed orders, from the live boards and the order archive
// together. Closed orders stay on their shard for a while after they are archived (their
// rating window), so an order may be in both; the copy with the higher revision wins, the live
// one on a tie, and totals leave the archived copy of a live order out.
//
// Order of reads: the shards first, then the archive. An order leaves its shard only after it
// was archived, so an order missing from a shard's answer is already in the archive when it is
// read after; reading the other way round could miss an order evicted in between.
//
// The merges here are pure (given the shards' answers and the archive's rows, produce the
// reply); `Application.readArchive` runs the archive's part on `historyQueue`, a concurrent
// queue, on the archive's pooled reader connections, never on an owner's queue.
import BangbangCore
import BangbangProtocol
import OrderArchive

package enum History {
    /// The archive's view of an `orders.mine` role.
    package static func archiveRole(_ role: OrderRole) -> ArchiveRole {
        switch role {
        case .published: .publisher
        case .accepted: .runner
        case .joined: .participant
        }
    }

    /// Whether a page in `scope` can hold archived orders: the archive holds closed ones only.
    package static func reachesArchive(_ scope: OrderScope) -> Bool { scope != .active }

    /// One page of `orders.mine`: `live` are the shards' parts (each its first `limit + 1`
    /// after the cursor), `archived` the archive's first `limit + 1` after it. Together they
    /// hold the first `limit + 1` of the union, so the page and its cursor are exact. Rows are
    /// chosen by their columns (creation time, id, revision, status) and only the archived
    /// orders that make the page are decoded.
    package static func page(live: [[OrderView]], archived: [ArchivedOrder], viewer: UserID, scope: OrderScope,
                     limit: Int) throws(DomainError) -> MyOrdersPage {
        enum Source { case live(OrderView), archived(ArchivedOrder) }
        var candidates: [OrderID: (key: Int64, revision: Int, source: Source)] = [:]
        for view in live.joined() {
            candidates[view.id] = (view.createdAt.milliseconds, view.revision, .live(view))
        }
        for record in archived {
            guard let raw = UInt64(record.id), let status = OrderStatus(rawValue: record.status) else {
                throw DomainError(.internalError, "archived order \(record.id) cannot be read")
            }
            let id = OrderID(rawValue: raw)
            guard scope.includes(status) else { continue }
            if let existing = candidates[id], existing.revision >= Int(record.revision) { continue }
            candidates[id] = (record.createdAt, Int(record.revision), .archived(record))
        }
        let chosen = candidates.sorted { MyOrdersPage.isNewer(($0.value.key, $0.key), than: ($1.value.key, $1.key)) }
            .prefix(limit + 1)
        var views: [OrderView] = []
        views.reserveCapacity(chosen.count)
        for (_, candidate) in chosen {
            switch candidate.source {
            case .live(let view): views.append(view)
            case .archived(let record): views.append(OrderView(try Order(archived: record), viewer: viewer))
            }
        }
        return MyOrdersPage.merge([views], limit: limit)
    }

    /// The order behind `order.get` or `admin.order` once its shard no longer holds it.
    static func view(of record: ArchivedOrder?, viewer: (Order) -> UserID?) throws(DomainError) -> OrderView {
        guard let record else { throw DomainError(.notFound, "no such order") }
        let order = try Order(archived: record)
        return OrderView(order, viewer: viewer(order))
    }

    /// `runner.earnings`: the shards' summaries plus the archive's totals per status, which
    /// must leave out the orders the shards still hold.
    package static func earnings(live: [RunnerEarnings], archived: [String: ArchivedRunnerTotals]) -> RunnerEarnings {
        var sum = live.reduce(RunnerEarnings(), +)
        for (status, totals) in archived {
            switch OrderStatus(rawValue: status) {
            case .completed:
                sum.completedCount += totals.count
                sum.tips += Cents(totals.earned)
            case .cancelled:
                sum.cancellationFees += Cents(totals.earned)
            default: break
            }
            sum.ratingCount += totals.ratingCount
            sum.ratingStars += totals.ratingStars
        }
        return sum
    }

    /// The archive's ids of users and orders.
    package static func archiveID(_ user: UserID) -> String { String(user.rawValue) }
    package static func archiveID(_ order: OrderID) -> String { String(order.rawValue) }

    package static func archiveCursor(_ cursor: ListCursor?) -> CreationCursor? {
        cursor.map { CreationCursor(createdAt: $0.key, id: $0.id.rawValue) }
    }
}

extension Application {
    /// Runs `read` on `historyQueue` and hands its result to `completion` there; an archive
    /// that cannot be read is `storage_unavailable` (logged), as a failing journal is.
    func readArchive<Value: Sendable>(_ read: @escaping @Sendable (OrderArchive) throws(ArchiveError) -> Value,
                                      completion: @escaping @Sendable (Result<Value, DomainError>) -> Void) {
        historyQueue.async { [self] in
            do throws(ArchiveError) {
                completion(.success(try read(archive)))
            } catch {
                logger.warning("archive_read_failed", ["detail": "\(error)"])
                completion(.failure(DomainError(.storageUnavailable, "order history cannot be read right now; try again")))
            }
        }
    }
}
