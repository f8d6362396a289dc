// A personal stream keeps no index of dropped entries any more; snapshots of format 1 stored
// streams with one (`firstIndex`, entries before it dropped but not yet removed), and reading
// such a snapshot must keep only the entries from it on.
import BangbangCore
import Foundation
import Testing
@testable import BangbangStorage

@Suite struct StoredPersonalStreamTests {
    /// A format-1 snapshot as JSON text, with one stream of `firstIndex` over messages "a", "b", "c".
    private static func versionOneSnapshot(firstIndex: Int) -> [UInt8] {
        let entries = ["a", "b", "c"].enumerated().map { index, text in
            #"{"sequence":\#(index + 7),"at":1000,"message":[\#(text.utf8.map(String.init).joined(separator: ","))]}"#
        }
        let stream = #"{"lastSequence":9,"entries":[\#(entries.joined(separator: ","))],"firstIndex":\#(firstIndex)}"#
        let accounts = #"{"accounts":[],"userByPhone":[],"sessions":[],"grantedAdministrators":[],"feedback":[],"nextUserID":1}"#
        return Array(#"{"formatVersion":1,"accounts":\#(accounts),"shards":[],"streams":[3,\#(stream)],"boardSequences":[]}"#.utf8)
    }

    @Test func aVersionOneStreamKeepsTheEntriesFromItsFirstIndex() throws {
        for (firstIndex, kept) in [(0, ["a", "b", "c"]), (1, ["b", "c"]), (3, [])] {
            let contents = try SnapshotContents.decode(Self.versionOneSnapshot(firstIndex: firstIndex))
            let stream = try #require(contents.streams[UserID(3)])
            #expect(stream.lastSequence == 9)
            #expect(stream.entries.map { String(decoding: $0.message, as: UTF8.self) } == kept)
            #expect(stream.entries.map(\.sequence) == Array(UInt64(7 + firstIndex)..<10))
        }
    }

    @Test func aFirstIndexOutsideTheEntriesIsRefused() {
        for firstIndex in [-1, 4] {
            #expect(throws: (any Error).self) { try SnapshotContents.decode(Self.versionOneSnapshot(firstIndex: firstIndex)) }
        }
    }

    @Test func theVersionOneFormRoundTrips() throws {
        let stream = PersonalStream(lastSequence: 5, entries: [.init(sequence: 5, at: Timestamp(milliseconds: 2), message: [1, 2])])
        let json = try JSONEncoder().encode(stream)
        #expect(String(decoding: json, as: UTF8.self).contains(#""firstIndex":0"#))
        #expect(try JSONDecoder().decode(PersonalStream.self, from: json) == stream)
    }

    @Test func aStreamIsTwoWords() {
        // The last number and the entries: a table of every user ever sent an event holds one each.
        #expect(MemoryLayout<PersonalStream>.size == 16)
    }
}
