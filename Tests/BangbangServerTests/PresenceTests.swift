// Presence keeps a byte of loop bits per user until a loop numbered 8 or more appears; it must
// answer as a table of 64-bit masks does, before, across and after that change.
import BangbangCore
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct PresenceTests {
    @Test func answersLikeATableOfMasks() {
        var generator = SeededGenerator(seed: 64)
        for highestLoop in [1, 7, 8, 63] {
            let presence = Presence()
            var model: [UserID: UInt64] = [:]
            for _ in 0..<2_000 {
                let user = UserID(UInt64.random(in: 1...20, using: &generator))
                // Mostly the low loops, so the table is narrow for a while before a high one appears.
                let loop = Int.random(in: 0..<10, using: &generator) < 9 ? Int.random(in: 0...min(highestLoop, 7), using: &generator)
                    : Int.random(in: 0...highestLoop, using: &generator)
                if Bool.random(using: &generator) {
                    presence.add(user, onLoop: loop)
                    model[user, default: 0] |= 1 << UInt64(loop)
                } else {
                    presence.remove(user, fromLoop: loop)
                    let remaining = (model[user] ?? 0) & ~(1 << UInt64(loop))
                    model[user] = remaining == 0 ? nil : remaining
                }
                #expect(presence.loops(of: user) == model[user] ?? 0)
            }
            for user in (1...20).map({ UserID(UInt64($0)) }) { #expect(presence.loops(of: user) == model[user] ?? 0) }
        }
    }
}
