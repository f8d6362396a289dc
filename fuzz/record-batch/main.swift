// Fuzz target: a partition journal's stream messages (JournalProtocol): the batch payload and
// the header that numbers its first record.
//
// The first byte picks the reader (even: a batch payload, odd: a `Bb-Records` header value); the
// rest is its input. Invariants, beyond "no crash and no sanitizer report":
//   - a payload that decodes is at least one record, and encodes back to exactly its bytes (one
//     wire form per batch: nothing is accepted that the encoder would not write), and its size is
//     what `encodedSize` says of its records;
//   - a header value that reads as a number is that number written in decimal, at least 1.
import JournalProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecordBatch(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] % 2 == 0 {
        guard let records = RecordBatch.decode(input) else { return 0 }
        require(!records.isEmpty, "a batch decoded to no record")
        require(RecordBatch.encode(records) == input, "a decoded batch did not encode back to its bytes")
        require(4 + records.reduce(0) { $0 + RecordBatch.encodedSize(of: $1) } == input.count,
                "a batch's size is not its records' sizes")
    } else {
        let text = String(decoding: input, as: UTF8.self)
        guard let first = RecordBatch.firstRecord(fromHeader: text) else { return 0 }
        require(first >= 1 && String(first) == text, "header \(text) read as record \(first)")
    }
    return 0
}
