// A node's copy of a user's personal stream numbered elsewhere: what it passes on runs 1, 2, 3 …
// with nothing twice, whatever the subject loses, repeats or reorders and whenever the owner's
// answers come; a jump is always reported as lost, and only when the owner no longer kept the
// events.
import Cluster
import Testing
import TestSupport

@Suite struct PersonalStreamFollowerTests {
    typealias Follower = PersonalStreamFollower<UInt64>

    @Test func passesTheNextNumberOnlyOnceTheOwnerHasAnswered() {
        var follower = Follower(after: 4)
        #expect(follower.asked == 4)
        let whileAsking = follower.receive(6, number: 6)
        #expect(whileAsking.events.isEmpty && whileAsking.ask == nil)
        let answer = follower.replayed(after: 4, events: [(5, 5)], through: 5)
        #expect(answer.events == [5, 6] && !answer.lost && answer.ask == nil)
        #expect(follower.receive(6, number: 6).events.isEmpty, "a copy")
        #expect(follower.receive(7, number: 7).events == [7])
        #expect(follower.head == 7 && follower.asked == nil)
    }

    @Test func aMissingNumberHoldsWhatFollowsAndAsksTheOwner() {
        var follower = Follower(after: 0)
        _ = follower.replayed(after: 0, events: [], through: 0)
        #expect(follower.receive(1, number: 1).events == [1])
        let gap = follower.receive(3, number: 3)
        #expect(gap.events.isEmpty && gap.ask == 1)
        #expect(follower.receive(4, number: 4).ask == nil, "asked once")
        let answer = follower.replayed(after: 1, events: [(2, 2), (3, 3)], through: 3)
        #expect(answer.events == [2, 3, 4] && !answer.lost && answer.ask == nil)
        #expect(follower.head == 4)
    }

    @Test func anAnswerThatNoLongerReachesBackIsALoss() {
        var follower = Follower(after: 10)
        let answer = follower.replayed(after: 10, events: [(14, 14), (15, 15)], through: 15)
        #expect(answer.events == [14, 15] && answer.lost)
        var unkept = Follower(after: 3)
        let empty = unkept.replayed(after: 3, events: [], through: 9)
        #expect(empty.events.isEmpty && empty.lost && unkept.head == 9)
    }

    @Test func anOwnerBehindWhatWasPassedOnIsALossAndItsNumbersCountAgain() {
        var follower = Follower(after: 20)
        let restored = follower.replayed(after: 20, events: [(1, 1), (2, 2)], through: 2)
        #expect(restored.events == [1, 2] && restored.lost && follower.head == 2)
    }

    @Test func anAnswerToAQuestionAskedAgainSinceChangesNothing() {
        var follower = Follower(after: 0)
        _ = follower.replayed(after: 0, events: [], through: 0)
        _ = follower.receive(2, number: 2)
        #expect(follower.asked == 0)
        let stale = follower.replayed(after: 7, events: [(8, 8)], through: 8)
        #expect(stale.events.isEmpty && follower.asked == 0 && follower.head == 0)
    }

    @Test func aGapLeftAmongTheHeldEventsAsksAgain() {
        var follower = Follower(after: 0)
        _ = follower.receive(3, number: 3)
        _ = follower.receive(6, number: 6)
        let answer = follower.replayed(after: 0, events: [(1, 1), (2, 2)], through: 2)
        #expect(answer.events == [1, 2, 3] && answer.ask == 3)
        let second = follower.replayed(after: 3, events: [(4, 4), (5, 5), (6, 6)], through: 6)
        #expect(second.events == [4, 5, 6] && second.ask == nil && !second.lost)
    }

    @Test func aRecheckAsksForWhatCameAfterTheHeadUnlessAQuestionIsOut() {
        var follower = Follower(after: 0)
        #expect(follower.recheck().ask == nil, "the first question is still out")
        _ = follower.replayed(after: 0, events: [(1, 1)], through: 1)
        // Event 2 was lost with nothing after it to show it.
        let recheck = follower.recheck()
        #expect(recheck.ask == 1 && recheck.events.isEmpty && follower.asked == 1)
        #expect(follower.recheck().ask == nil, "asked once")
        let answer = follower.replayed(after: 1, events: [(2, 2)], through: 2)
        #expect(answer.events == [2] && !answer.lost && answer.ask == nil && follower.head == 2)
        let nothingNew = follower.recheck()
        #expect(follower.replayed(after: nothingNew.ask ?? 99, events: [], through: 2).events.isEmpty && follower.asked == nil)
    }

    /// An owner numbers a user's events and keeps the last `capacity`; each goes out on the
    /// subject, which loses some, repeats some and lets a later one overtake an earlier (a new
    /// owner's connection). The node starts following at a random point, and asks again when an
    /// answer is late. Its answers are formed when asked and arrive later. What is passed on
    /// must count up by one except where a loss was reported, and with every event kept nothing
    /// may be lost and every event after the start must be passed on once.
    @Test(arguments: 0..<40)
    func whatIsPassedOnIsTheStream(seed: UInt64) {
        for capacity in [Int.max, 6] {
            var random = SeededGenerator(seed: seed &* 31 &+ UInt64(truncatingIfNeeded: capacity))
            var published: UInt64 = UInt64.random(in: 0...20, using: &random)
            let start = UInt64.random(in: 0...published, using: &random)
            var follower = Follower(after: start)
            var wire: [UInt64] = []
            var questions: [UInt64] = [start]
            var answers: [(after: UInt64, events: [(number: UInt64, event: UInt64)], through: UInt64)] = []
            var passed: [UInt64] = []
            var failures: [String] = []
            var lostReported = 0

            func kept(after: UInt64) -> [(number: UInt64, event: UInt64)] {
                let first = capacity == .max ? 1 : UInt64(max(1, Int(published) - capacity + 1))
                let from = max(after + 1, first)
                return from <= published ? (from...published).map { ($0, $0) } : []
            }
            func take(_ outcome: Follower.Outcome) {
                var previous = passed.last ?? start
                for number in outcome.events {
                    if number <= previous { failures.append("\(number) after \(previous)") }
                    if number != previous + 1 && !outcome.lost { failures.append("jump \(previous) → \(number) not reported") }
                    previous = number
                }
                if outcome.lost { lostReported += 1 }
                passed += outcome.events
                if let ask = outcome.ask { questions.append(ask) }
            }
            func deliver() {
                let number = wire.remove(at: Int.random(in: 0..<min(wire.count, 3), using: &random))
                take(follower.receive(number, number: number))
            }
            func answer() {
                let after = questions.removeFirst()
                answers.append((after, kept(after: after), published))
            }
            func hearAnswer() {
                let answer = answers.removeFirst()
                take(follower.replayed(after: answer.after, events: answer.events, through: answer.through))
            }

            for _ in 0..<500 {
                switch UInt64.random(in: 0..<10, using: &random) {
                case 0...2:
                    published += 1
                    let roll = UInt64.random(in: 0..<20, using: &random)
                    if roll == 0 { break }                                      // lost on the subject
                    wire.append(published)
                    if roll == 1 { wire.append(published) }                   // a copy
                case 3...5 where !wire.isEmpty: deliver()
                case 6 where !questions.isEmpty: answer()
                case 7 where !answers.isEmpty: hearAnswer()
                case 8 where follower.asked != nil && questions.isEmpty && answers.isEmpty:
                    questions.append(follower.asked!)                         // late: asked again
                default: break
                }
            }
            // A last event that arrives, then everything in flight.
            published += 1
            wire.append(published)
            var rounds = 0
            while (!wire.isEmpty || !questions.isEmpty || !answers.isEmpty) && rounds < 10_000 {
                rounds += 1
                if !wire.isEmpty { deliver() } else if !questions.isEmpty { answer() } else { hearAnswer() }
            }
            #expect(failures.isEmpty, "seed \(seed), capacity \(capacity): \(failures.prefix(5))")
            #expect(follower.asked == nil && follower.head == published, "seed \(seed), capacity \(capacity): settled at the end")
            if capacity == .max {
                #expect(lostReported == 0, "seed \(seed): nothing lost while the owner keeps everything")
                #expect(passed == Array((start + 1)...published), "seed \(seed)")
            }
        }
    }
}
