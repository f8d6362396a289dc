// Several journal records in one stream message (RecordBatch.swift): what is encoded is read back
// exactly, and anything else (cut short, a wrong count, bytes after the last record, damage) is
// refused or read as some whole batch, never a crash; a snapshot names the message its last record
// ends, and refuses a position no message could have.
import JournalProtocol
import Testing
import TestSupport
@testable import Cluster

@Suite struct RecordBatchTests {
    func randomRecords(_ random: inout SeededGenerator) -> [[UInt8]] {
        (0..<Int.random(in: 1...12, using: &random)).map { _ in
            (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
    }

    @Test func aBatchIsReadBackExactlyAndEveryCutOrExtraByteIsRefused() {
        var random = SeededGenerator(seed: 17)
        for _ in 0..<200 {
            let records = randomRecords(&random)
            let bytes = RecordBatch.encode(records)
            #expect(bytes.count == 4 + records.reduce(0) { $0 + RecordBatch.encodedSize(of: $1) })
            #expect(RecordBatch.decode(bytes) == records)
            for cut in 0..<bytes.count { #expect(RecordBatch.decode(Array(bytes[..<cut])) == nil, "cut at \(cut)") }
            #expect(RecordBatch.decode(bytes + [0]) == nil)
        }
        #expect(RecordBatch.decode(RecordBatch.payloadHeader(count: 0)) == nil, "a batch holds a record")
        #expect(RecordBatch.decode(RecordBatch.encode([[]])) == [[]], "an empty record is a record")
        // A count the bytes could never hold is refused before anything is read.
        #expect(RecordBatch.decode([0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0]) == nil)
    }

    @Test func damagedBatchesAreRefusedOrReadAsWholeRecords() {
        var random = SeededGenerator(seed: 23)
        var refused = 0
        for _ in 0..<3_000 {
            let bytes = random.damaged(RecordBatch.encode(randomRecords(&random)))
            guard let records = RecordBatch.decode(bytes) else { refused += 1; continue }
            // Read as something: then it is exactly what those records encode to.
            #expect(RecordBatch.encode(records) == bytes)
        }
        #expect(refused > 0)
    }

    @Test func theHeaderIsARecordNumberAndNothingElse() {
        #expect(RecordBatch.firstRecord(fromHeader: "1") == 1)
        #expect(RecordBatch.firstRecord(fromHeader: "18446744073709551615") == UInt64.max)
        for bad in ["", "0", "05", "00", "-3", "+3", " 3", "3 ", "3a", "0x10", "18446744073709551616", "٣"] {
            #expect(RecordBatch.firstRecord(fromHeader: bad) == nil, "\(bad)")
        }
    }

    @Test func aSnapshotNamesTheMessageItsLastRecordEndsOnlyWhenItDiffers() throws {
        let partition = PartitionID(space: .boards, index: 0)
        let batched = PartitionSnapshot(partition: partition, sequence: 105, state: [1, 2, 3], message: 6)
        #expect(try PartitionSnapshot(decoding: batched.encoded(), of: partition) == batched)
        // One record per message so far: nothing to say, and the plain format older nodes read.
        let plain = PartitionSnapshot(partition: partition, sequence: 5, state: [1], message: 5)
        #expect(plain.message == nil)
        #expect(plain.encoded()[4] == 1)
        #expect(try PartitionSnapshot(decoding: plain.encoded(), of: partition) == plain)
        // A message past the record cannot be: every message holds at least one record.
        var impossible = batched
        impossible.sequence = 6
        #expect(throws: JournalError.self) { try PartitionSnapshot(decoding: impossible.encoded(), of: partition) }
    }
}
