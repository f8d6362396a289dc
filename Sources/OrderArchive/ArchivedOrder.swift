/// One closed order as the archive stores it. The archive does not import BangbangCore: like the
/// journal it keeps the order's full encoded bytes opaque, plus the few fields history queries
/// filter and sum on. The server maps its `Order` to this record and decodes `encoded` back.
public struct ArchivedOrder: Sendable, Equatable {
    public var id: String
    public var type: String
    public var campus: String
    public var publisher: String
    public var runner: String?
    public var status: String
    public var tip: Int
    /// Milliseconds since the Unix epoch.
    public var createdAt: Int64
    /// Milliseconds since the Unix epoch.
    public var closedAt: Int64
    public var revision: Int64
    public var publisherRating: Int?
    public var runnerRating: Int?
    public var runnerEarning: Int
    /// Group orders: who holds a share, each once (read back in ascending order).
    public var participants: [String]
    public var encoded: [UInt8]

    public init(id: String, type: String, campus: String, publisher: String, runner: String?,
                status: String, tip: Int, createdAt: Int64, closedAt: Int64, revision: Int64,
                publisherRating: Int? = nil, runnerRating: Int? = nil, runnerEarning: Int,
                participants: [String] = [], encoded: [UInt8]) {
        self.id = id
        self.type = type
        self.campus = campus
        self.publisher = publisher
        self.runner = runner
        self.status = status
        self.tip = tip
        self.createdAt = createdAt
        self.closedAt = closedAt
        self.revision = revision
        self.publisherRating = publisherRating
        self.runnerRating = runnerRating
        self.runnerEarning = runnerEarning
        self.participants = participants
        self.encoded = encoded
    }
}
