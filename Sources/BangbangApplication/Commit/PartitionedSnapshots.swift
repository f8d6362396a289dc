// Snapshots of a pair whose account partition has a journal of its own: each partition has its own
// snapshot covering its own journal, `p<k>` the boards' half and its outbox, `a<k>` the accounts'
// half (the personal streams with it), its outbox and the inbox reader's state, cut together with
// the streams. Once `a<k>`'s is stored, the inbox is purged through that reader's position: nothing
// reads it again. The inbox's follower applies on the publishing queue, so a cut reads the streams
// and the reader's state in one block there.
import BangbangCore
import BangbangStorage
import Foundation
import InboxProtocol

/// What a cut adds when the account partition has a journal of its own: the last sequence of
/// that journal it covers, each partition's inbox states, and how far the reader had applied
/// the inbox.
package struct PartitionedCut: Sendable {
    var accountsSequence: UInt64
    package var boards: InboxStates
    package var accounts: InboxStates
    var readerPosition: UInt64
}

extension Application {
    /// The rest of `takeSnapshotCut` with the owners suspended and no commit in flight: every
    /// durable record is handed to its sender and no owner can append, so the outboxes hold
    /// exactly the records through each journal's cut. The streams and the reader's state are
    /// read in one block where the follower applies.
    func partitionedCut(through sequence: UInt64, inbox: any InboxLink) -> SnapshotCut {
        let outboxes = inbox.outboxStates()
        let (accountsHalf, reader) = publisher.queue.sync { (accountsPartitionState(), inbox.readerState) }
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
            try inbox.purge(through: partitioned.readerPosition)
            accountsReport.removed.append("\(inbox.name) through \(partitioned.readerPosition)")
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

