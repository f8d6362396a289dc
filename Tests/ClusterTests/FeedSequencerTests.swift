// A node's numbering of a board fed by many partitions: one increasing `seq`, and a
// subscriber's list plus the events it is sent after the reply is exactly the board, whatever
// order the partitions' events and their list replies reach the node in.
import Cluster
import Testing
import TestSupport

@Suite struct FeedSequencerTests {
    @Test func numbersEventsInTheOrderReceivedAndDropsCopies() {
        var sequencer = FeedSequencer()
        let decisions = [(3, 40), (9, 7), (3, 41), (3, 41), (3, 12)].map {
            sequencer.receive(from: $0.0, partitionSequence: $0.1)
        }
        #expect(decisions == [.forward(sequence: 1), .forward(sequence: 2), .forward(sequence: 3), .stale, .stale])
        #expect(sequencer.sequence == 3)
    }

    @Test func aSkippedPartitionSequenceIsAGap() {
        var sequencer = FeedSequencer()
        let decisions = [5, 8, 9].map { sequencer.receive(from: 1, partitionSequence: $0) }
        #expect(decisions == [.forward(sequence: 1), .gap(partition: 1, expected: 6, received: 8), .forward(sequence: 2)])
    }

    @Test func afterAPauseInListeningNothingIsTakenForLostAndTheNumberingGoesOn() {
        var sequencer = FeedSequencer()
        _ = [4, 5].map { sequencer.receive(from: 1, partitionSequence: $0) }
        sequencer.stopListening()
        // Changes 6 to 8 happened while nobody here listened.
        let decisions = [9, 10].map { sequencer.receive(from: 1, partitionSequence: $0) }
        #expect(decisions == [.forward(sequence: 3), .forward(sequence: 4)])
    }

    @Test func aListTeachesWhereAPartitionStands() {
        var sequencer = FeedSequencer()
        sequencer.learn(partition: 2, listedThrough: 10)
        let decisions = [10, 12].map { sequencer.receive(from: 2, partitionSequence: $0) }
        #expect(decisions == [.stale, .gap(partition: 2, expected: 11, received: 12)])
    }

    @Test func aSubscriptionHoldsEventsUntilEveryListIsInAndDropsWhatTheListsReflect() {
        var subscription = FeedSubscription<String>(partitions: [1, 2], at: 30)
        let whileListing = [("p1#5", 1, 5), ("p2#8", 2, 8), ("p1#6", 1, 6)].map {
            subscription.receive($0.0, from: UInt16($0.1), partitionSequence: UInt64($0.2))
        }
        #expect(whileListing == [false, false, false])
        let afterFirstList = subscription.listed(partition: 1, through: 5)
        #expect(afterFirstList.isEmpty && !subscription.isReady)
        let afterEveryList = subscription.listed(partition: 2, through: 8)
        #expect(afterEveryList == ["p1#6"] && subscription.isReady)
        #expect(!subscription.isSettled, "p2 has not been seen past its list yet")
        let afterwards = [("p2#8 again", 2, 8), ("p2#9", 2, 9), ("p1#7", 1, 7)].map {
            subscription.receive($0.0, from: UInt16($0.1), partitionSequence: UInt64($0.2))
        }
        #expect(afterwards == [false, true, true])
        #expect(subscription.isSettled, "every partition seen past its list: nothing left to filter")
        #expect(subscription.replySequence == 30)
    }

    /// Partitions change a board (orders enter and leave); their events reach a node in any
    /// interleaving, and subscriptions start at random moments, each partition answering its
    /// list at a random later moment. Every subscriber's list plus what it is sent must be the
    /// board: nothing applied twice, nothing missed, every `seq` above the reply's and increasing.
    @Test(arguments: 0..<30)
    func aSubscribersViewIsAlwaysTheBoard(seed: UInt64) {
        var random = SeededGenerator(seed: seed &+ 77)
        let partitions: [UInt16] = [0, 1, 2]
        // Each partition's board (its open orders) and its log of changes, numbered from 1.
        var boards: [UInt16: Set<Int>] = [:]
        var logs: [UInt16: [(order: Int, enters: Bool)]] = [:]
        var nextOrder = 1
        // Changes published by a partition and not yet received by the node, per partition in order.
        var inFlight: [UInt16: [Int]] = [:]
        var sequencer = FeedSequencer()
        struct Subscriber {
            var subscription: FeedSubscription<(order: Int, enters: Bool, seq: UInt64)>
            var view: Set<Int> = []
            var lastSeq: UInt64
            /// Partitions whose list was asked for and not answered yet: answered later at the
            /// partition's state at that moment.
            var unanswered: Set<UInt16>
            var failures: [String] = []

            mutating func apply(_ event: (order: Int, enters: Bool, seq: UInt64)) {
                if event.seq <= lastSeq { failures.append("seq \(event.seq) after \(lastSeq)") }
                lastSeq = event.seq
                if event.enters {
                    if !view.insert(event.order).inserted { failures.append("order \(event.order) entered twice") }
                } else if view.remove(event.order) == nil {
                    failures.append("order \(event.order) left without being listed")
                }
            }
        }
        var subscribers: [Subscriber] = []

        func changeABoard() {
            let partition = partitions.randomElement(using: &random)!
            var board = boards[partition, default: []]
            let change: (order: Int, enters: Bool)
            if let leaving = board.randomElement(using: &random), Bool.random(using: &random) {
                board.remove(leaving)
                change = (leaving, false)
            } else {
                board.insert(nextOrder)
                change = (nextOrder, true)
                nextOrder += 1
            }
            boards[partition] = board
            logs[partition, default: []].append(change)
            inFlight[partition, default: []].append(logs[partition]!.count)
        }

        func deliverOne() {
            guard let partition = partitions.filter({ !(inFlight[$0] ?? []).isEmpty }).randomElement(using: &random) else { return }
            let partitionSequence = inFlight[partition]!.removeFirst()
            let seq: UInt64
            switch sequencer.receive(from: partition, partitionSequence: UInt64(partitionSequence)) {
            case .forward(let number): seq = number
            // Reflected in the first list the node was given of this partition, so in every
            // list answered since, and in every list still to be answered.
            case .stale: return
            case .gap(let partition, let expected, let received):
                Issue.record("a gap in partition \(partition): \(expected) expected, \(received) received")
                return
            }
            let change = logs[partition]![partitionSequence - 1]
            for index in subscribers.indices
            where subscribers[index].subscription.receive((change.order, change.enters, seq), from: partition,
                                                          partitionSequence: UInt64(partitionSequence)) {
                subscribers[index].apply((change.order, change.enters, seq))
            }
        }

        func answerOneList() {
            let waiting = subscribers.indices.filter { !subscribers[$0].unanswered.isEmpty }
            guard let index = waiting.randomElement(using: &random) else { return }
            let partition = subscribers[index].unanswered.randomElement(using: &random)!
            subscribers[index].unanswered.remove(partition)
            let listedThrough = UInt64(logs[partition]?.count ?? 0)
            subscribers[index].view.formUnion(boards[partition, default: []])
            sequencer.learn(partition: partition, listedThrough: listedThrough)
            for event in subscribers[index].subscription.listed(partition: partition, through: listedThrough) {
                subscribers[index].apply(event)
            }
        }

        for _ in 0..<3_000 {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<40: changeABoard()
            case 40..<80: deliverOne()
            case 80..<95: answerOneList()
            default:
                subscribers.append(Subscriber(subscription: FeedSubscription(partitions: partitions, at: sequencer.sequence),
                                              lastSeq: sequencer.sequence, unanswered: Set(partitions)))
            }
        }
        while partitions.contains(where: { !(inFlight[$0] ?? []).isEmpty }) { deliverOne() }
        while subscribers.contains(where: { !$0.unanswered.isEmpty }) { answerOneList() }

        let board = boards.values.reduce(into: Set<Int>()) { $0.formUnion($1) }
        #expect(subscribers.count > 20)
        for (index, subscriber) in subscribers.enumerated() {
            #expect(subscriber.failures.isEmpty, "subscriber \(index), seed \(seed): \(subscriber.failures.prefix(3))")
            #expect(subscriber.view == board, "subscriber \(index), seed \(seed)")
        }
    }
}
