// The account partition on a stream of its own (docs/scale-out.md, section 7b, step 2a's
// state): a node that owns the board partition `p0` on `ClusterStorage`'s journal and the
// account partition `a0` on this one sends every personal event between them over the inbox, as
// nodes owning them apart will. Each partition then has its own snapshot object covering its
// own stream: `p0` the boards' half and `p0`'s outbox, `a0` the accounts' half (the personal
// streams with it), `a0`'s outbox and the reader's state, cut together with the streams. Once
// `a0`'s is stored, the inbox is purged through that reader's position: nothing reads it again.
//
// The follower applies on the publishing queue, where the rest of the account half's changes
// run in one process, so a cut reads the streams and the reader's state in one block there.
import Cluster
import BangbangStorage
import Dispatch
import Foundation
import InboxProtocol
import NATSClient
import Synchronization

/// What a node that took the account partition hands the application beside `ClusterStorage`.
struct AccountsPartitionStorage: Sendable {
    /// The account partition's snapshot (its half, with its inbox states) and the records after it.
    var recovered: RecoveredLog
    var makeJournal: @Sendable (_ completionQueue: DispatchQueue) -> any CommitJournal
    /// Where the inbox's senders and follower talk.
    var jetStream: JetStream
}

/// The inbox between a node's partitions: a sender per source the node commits for, and the
/// follower of the account partition it owns.
struct InboxWiring: Sendable {
    let senders: [InboxSource: InboxSender]
    let follower: InboxFollower

    /// The senders of the pair's two sources (`sources`, of the partitions `map` divides)
    /// restored from the outboxes the snapshots kept (new ones without), and the follower of the
    /// pair's account partition from the reader's state; the follower is not started. Returns the
    /// route the publisher sends through, feeding `accounts` on `queue`.
    static func make(_ storage: AccountsPartitionStorage, map: PartitionMap, sources: PartitionPairSources,
                     outboxes: [InboxSource: InboxOutbox.State],
                     reader: InboxReader.State, accounts: AccountPublisher, queue: DispatchQueue,
                     logger: Logger, metrics: InboxMetrics) -> (InboxWiring, InboxRoute) {
        let partition = PartitionID(space: .accounts, index: Int(sources.accounts.index))
        let follower = InboxFollower(inbox: PartitionInbox(partition: partition, jetStream: storage.jetStream), state: reader,
                                     queue: queue, logger: logger, metrics: metrics) { _, entry in
            accounts.receive(entry.events, at: entry.at)
        }
        var senders: [InboxSource: InboxSender] = [:]
        for source in [sources.boards, sources.accounts] {
            let outbox = outboxes[source].map { InboxOutbox(source: source, state: $0) } ?? InboxOutbox(source: source)
            let sender = InboxSender(jetStream: storage.jetStream, outbox: outbox,
                                     localFollowers: [sources.accounts.index: follower]) { destination, error in
                metrics.publishFailures.increment()
                logger.warning("inbox_publish_failed", ["source": "\(source)", "inbox": "a\(destination)", "detail": "\(error)"])
            }
            metrics.track { sender.undeliveredCount }
            senders[source] = sender
        }
        let wiring = InboxWiring(senders: senders, follower: follower)
        return (wiring, InboxRoute(map: map, senders: senders, followers: [sources.accounts.index: follower]))
    }

    /// Waits until every entry handed to the senders so far is stored and the follower has
    /// applied the inbox to its end. A node that took the partitions over calls it before it
    /// serves: the personal streams were numbered to there before, and a device resuming must
    /// find them so, not a stream still being rebuilt. Blocks; throws after `bound`.
    func catchUp(within bound: Duration) throws {
        let deadline = ContinuousClock.now + bound
        let inbox = follower.inbox
        while true {
            if senders.values.allSatisfy({ $0.undeliveredCount == 0 }) {
                let end = try blocking { try await inbox.jetStream.streamInfo(inbox.streamName).lastSequence }
                if follower.appliedPosition >= end { return }
                follower.wake()
            }
            guard ContinuousClock.now < deadline else {
                throw ClusterError("the inbox \(inbox.streamName) was not applied to its end within \(bound) "
                                   + "(applied through \(follower.appliedPosition))")
            }
            usleep(5_000)
        }
    }

    /// Drops the inbox's messages through `position`, once the account partition's snapshot
    /// holds a reader at or past it. Blocks; call it off the publishing queue.
    func purgeInbox(through position: UInt64) throws {
        let inbox = follower.inbox
        try blocking { try await inbox.purge(through: position) }
    }

    /// Each sender's outbox once everything handed over so far is in it. Blocks; call it where
    /// nothing more is handed over meanwhile (a cut, with the owners suspended).
    func outboxStates() -> [InboxSource: InboxOutbox.State] {
        let group = DispatchGroup()
        let states = Mutex<[InboxSource: InboxOutbox.State]>([:])
        for (source, sender) in senders {
            group.enter()
            sender.state { state in
                states.withLock { $0[source] = state }
                group.leave()
            }
        }
        group.wait()
        return states.withLock { $0 }
    }
}

/// What a cut adds when the account partition has a journal of its own: the last sequence of
/// that journal it covers, each partition's inbox states, and how far the reader had applied
/// the inbox.
struct PartitionedCut: Sendable {
    var accountsSequence: UInt64
    var boards: InboxStates
    var accounts: InboxStates
    var readerPosition: UInt64
}

extension Application {
    /// The rest of `takeSnapshotCut` with the owners suspended and no commit in flight: every
    /// durable record is handed to its sender and no owner can append, so the outboxes hold
    /// exactly the records through each journal's cut. The streams and the reader's state are
    /// read in one block where the follower applies.
    func partitionedCut(through sequence: UInt64, inbox: InboxWiring) -> SnapshotCut {
        let outboxes = inbox.outboxStates()
        let (accountsHalf, reader) = publisher.queue.sync { (accountsPartitionState(), inbox.follower.state) }
        let boardsStates = InboxStates(outbox: outboxes[sources.boards].map(InboxStateCodec.encode), reader: nil)
        let accountsStates = InboxStates(outbox: outboxes[sources.accounts].map(InboxStateCodec.encode),
                                         reader: InboxStateCodec.encode(reader))
        return SnapshotCut(sequence: sequence, contents: SnapshotContents(boards: boardsPartitionState(), accounts: accountsHalf),
                           partitioned: PartitionedCut(accountsSequence: accountsJournal.nextSequence - 1, boards: boardsStates,
                                                       accounts: accountsStates, readerPosition: reader.position))
    }

    /// Each partition's half into its own journal's snapshot, then the inbox purged through the
    /// reader the account partition's holds. Either snapshot may be the newer after a crash
    /// between the two: a reader behind reads again what the inbox holds, and an outbox behind
    /// sends again what the reader then drops. Returns the boards' bytes (the bulk, whose size
    /// the next encoding reserves), when encoding ended, and what was stored.
    func storeHalves(of cut: SnapshotCut, _ partitioned: PartitionedCut, expectedSize: Int,
                     keepingRecordsAfter archived: UInt64) throws -> ([UInt8], ContinuousClock.Instant, StoredSnapshot) {
        let accountsBytes = try cut.contents.accountsPartition.encoded()
        let boardsBytes = try cut.contents.boardsPartition.encoded(expectedSize: expectedSize)
        let encodedAt = ContinuousClock.now
        var accountsReport = try accountsJournal.storeSnapshot(accountsBytes, inboxStates: partitioned.accounts,
                                                               coveringThrough: partitioned.accountsSequence, keepingRecordsAfter: 0)
        if let inbox, partitioned.readerPosition > 0 {
            try inbox.purgeInbox(through: partitioned.readerPosition)
            accountsReport.removed.append("\(inbox.follower.inbox.streamName) through \(partitioned.readerPosition)")
        }
        var report = try journal.storeSnapshot(boardsBytes, inboxStates: partitioned.boards,
                                               coveringThrough: cut.sequence, keepingRecordsAfter: archived)
        report.location += ", " + accountsReport.location
        report.contentBytes += accountsReport.contentBytes
        report.storedBytes += accountsReport.storedBytes
        report.removed += accountsReport.removed
        return (boardsBytes, encodedAt, report)
    }
}

/// The two sources of personal events a node's application commits for: its board partition
/// `p<k>` and its account partition `a<k>` (a single node's: `p0` and `a0`).
struct PartitionPairSources: Sendable, Equatable {
    let boards: InboxSource
    let accounts: InboxSource

    init(pair: Int) {
        boards = InboxSource(space: .boards, index: UInt16(pair))
        accounts = InboxSource(space: .accounts, index: UInt16(pair))
    }
}
