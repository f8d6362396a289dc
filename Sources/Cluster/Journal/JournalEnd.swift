/// Where a partition's journal ends: the stream sequence of its last message and the number of its
/// last record (equal until the stream's first batch).
public struct JournalEnd: Sendable, Equatable {
    public var message: UInt64
    public var record: UInt64

    public init(message: UInt64, record: UInt64) {
        self.message = message
        self.record = record
    }
}
