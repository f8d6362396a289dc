// What a snapshot holds: every owner's state at one consistent cut, plus the numbering of the
// personal streams and board feeds, so sequence numbers continue across restarts.
import BangbangCore
import Foundation

struct SnapshotContents: Codable, Sendable {
    static let formatVersion = 1

    var formatVersion = SnapshotContents.formatVersion
    var accounts: AccountState
    var shards: [BoardShard]
    var streams: [UserID: PersonalStreams.Stream]
    var boardSequences: [OrderType: UInt64]

    func encoded() throws -> [UInt8] { Array(try JSONEncoder().encode(self)) }

    static func decode(_ bytes: [UInt8]) throws -> SnapshotContents {
        let contents = try JSONDecoder().decode(SnapshotContents.self, from: Data(bytes))
        guard contents.formatVersion == formatVersion else {
            throw JournalEntryError(message: "snapshot format \(contents.formatVersion) is not supported "
                                    + "(this server reads \(formatVersion))")
        }
        return contents
    }
}
