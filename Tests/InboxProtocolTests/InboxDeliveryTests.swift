// The outbox and the reader together: every personal event reaches its partition's numbering
// exactly once and in its source's journal order, whatever the stream loses, doubles or stores
// out of order, and whatever source crashes and is taken over from a snapshot.
import InboxProtocol
import Testing
import TestSupport

@Suite struct InboxDeliveryTests {
    static let boardSource = InboxSource(space: .boards, index: 3)

    static func events(ofRecord record: UInt64, users: [UInt64] = [7]) -> [InboxEvent] {
        users.map { InboxEvent(user: $0, name: "order.changed", data: Array("r\(record)u\($0)".utf8)) }
    }

    static let at: Int64 = 1_796_099_188_971

    static func add(_ records: ClosedRange<UInt64>, to destination: UInt16, in outbox: inout InboxOutbox) {
        for record in records {
            outbox.add(journalSequence: record, at: at, eventsByDestination: [(destination, events(ofRecord: record))])
        }
    }

    // MARK: The outbox

    @Test func numbersEntriesPerPartitionInJournalOrderAndSendsThemTogether() {
        var outbox = InboxOutbox(source: Self.boardSource)
        outbox.add(journalSequence: 10, at: Self.at, eventsByDestination: [(0, Self.events(ofRecord: 10)),
                                                                           (5, Self.events(ofRecord: 10, users: [5, 69]))])
        outbox.add(journalSequence: 11, at: Self.at + 1, eventsByDestination: [(5, Self.events(ofRecord: 11))])
        outbox.add(journalSequence: 12, at: Self.at + 2, eventsByDestination: [(0, [])])
        let publishes = outbox.publishes()
        #expect(publishes.map(\.destination) == [0, 5])
        #expect(publishes.map { $0.message.entries.map(\.outboxSequence) } == [[1], [1, 2]])
        #expect(publishes[1].message.entries.map(\.journalSequence) == [10, 11])
        #expect(publishes[1].message.entries[0].events.map(\.user) == [5, 69])
        #expect(publishes[1].message.entries[1].at == Self.at + 1)
        #expect(outbox.publishes().isEmpty, "what was sent is not sent again unasked")
        #expect(outbox.pendingCount == 3)
    }

    @Test func aPausedPartitionWaitsAndTheOthersGoOn() {
        var outbox = InboxOutbox(source: Self.boardSource)
        outbox.add(journalSequence: 1, at: Self.at, eventsByDestination: [(0, Self.events(ofRecord: 1)), (1, Self.events(ofRecord: 1))])
        #expect(outbox.publishes(excluding: [0]).map(\.destination) == [1])
        #expect(outbox.publishes().map(\.destination) == [0])
    }

    @Test func aFailureSendsAgainEveryUndeliveredEntryIncludingAcknowledgedLaterOnes() {
        var outbox = InboxOutbox(source: Self.boardSource)
        var sent: [InboxOutbox.Publish] = []
        for record in UInt64(1)...4 {
            Self.add(record...record, to: 0, in: &outbox)
            sent += outbox.publishes()
        }
        outbox.acknowledged(sent[0])
        outbox.acknowledged(sent[2])   // stored, but the reader dropped it if the second was lost
        let resent = outbox.failed(sent[1])
        #expect(resent)
        let again = outbox.publishes()
        #expect(again.count == 1, "sent again together")
        #expect(again[0].message.entries.map(\.outboxSequence) == [2, 3, 4])
        #expect(again[0].attempt > sent[1].attempt)
        #expect(outbox.pendingCount == 3)
    }

    @Test func answersToAnEarlierAttemptChangeNothing() {
        var outbox = InboxOutbox(source: Self.boardSource)
        Self.add(1...1, to: 0, in: &outbox)
        let first = outbox.publishes()
        Self.add(2...2, to: 0, in: &outbox)
        let second = outbox.publishes()
        let firstResent = outbox.failed(first[0])
        #expect(firstResent)
        outbox.acknowledged(first[0])
        outbox.acknowledged(second[0])
        let secondResent = outbox.failed(second[0])
        #expect(!secondResent)
        #expect(outbox.pendingCount == 2)
        let again = outbox.publishes()
        again.forEach { outbox.acknowledged($0) }
        #expect(outbox.pendingCount == 0)
    }

    @Test func anEntryIsDeliveredOnlyOnceEveryEarlierOneIs() {
        var outbox = InboxOutbox(source: Self.boardSource)
        var sent: [InboxOutbox.Publish] = []
        for record in UInt64(1)...3 {
            Self.add(record...record, to: 0, in: &outbox)
            sent += outbox.publishes()
        }
        outbox.acknowledged(sent[2])
        outbox.acknowledged(sent[1])
        #expect(outbox.state.destinations[0]?.pending.map(\.outboxSequence) == [1, 2, 3])
        outbox.acknowledged(sent[0])
        #expect(outbox.state.destinations[0]?.pending == [])
        #expect(outbox.state.destinations[0]?.nextSequence == 4)
    }

    @Test func aRestoredOutboxSendsWhatWasPendingThenNumbersOn() {
        var outbox = InboxOutbox(source: Self.boardSource)
        Self.add(1...1, to: 2, in: &outbox)
        let first = outbox.publishes()
        Self.add(2...3, to: 2, in: &outbox)
        let rest = outbox.publishes()
        outbox.acknowledged(first[0])
        var restored = InboxOutbox(source: Self.boardSource, state: outbox.state)
        Self.add(4...4, to: 2, in: &restored)
        let publishes = restored.publishes()
        #expect(publishes.map { $0.message.entries.map(\.outboxSequence) } == [[2, 3, 4]])
        #expect(Array(publishes[0].message.entries.prefix(2)) == rest[0].message.entries)
    }

    // MARK: The reader

    @Test func theReaderAppliesEachSourcesNextEntriesOnly() {
        var outbox = InboxOutbox(source: Self.boardSource)
        var sent: [InboxMessage] = []
        for record in UInt64(1)...4 {
            Self.add(record...record, to: 0, in: &outbox)
            sent += outbox.publishes().map(\.message)
        }
        let twoAndThree = InboxMessage(source: Self.boardSource, entries: sent[1].entries + sent[2].entries)
        let oneToThree = InboxMessage(source: Self.boardSource, entries: sent[0].entries + twoAndThree.entries)
        var reader = InboxReader()
        let outcomes = [reader.read(twoAndThree, at: 1), reader.read(sent[0], at: 2), reader.read(oneToThree, at: 3),
                        reader.read(oneToThree, at: 3), reader.read(oneToThree, at: 5)]
        #expect(outcomes == [InboxReader.Outcome(duplicates: 0, applied: 0..<0, outOfOrder: 2),
                             InboxReader.Outcome(duplicates: 0, applied: 0..<1, outOfOrder: 0),
                             InboxReader.Outcome(duplicates: 1, applied: 1..<3, outOfOrder: 0),
                             nil,
                             InboxReader.Outcome(duplicates: 3, applied: 3..<3, outOfOrder: 0)])
        reader.skipUnreadable(at: 6)
        #expect(reader.read(sent[3], at: 7) == InboxReader.Outcome(duplicates: 0, applied: 0..<1, outOfOrder: 0))
        #expect(reader.state == InboxReader.State(position: 7, applied: [Self.boardSource: 4]))
    }

    // MARK: Both, over a stream that loses, doubles and reorders

    @Test(arguments: 0..<40)
    func everyEventIsAppliedOnceInJournalOrder(seed: UInt64) throws {
        var simulation = InboxSimulation(seed: seed)
        simulation.run(steps: 1_500)
        simulation.settle()
        for source in simulation.sources {
            #expect(source.outbox.pendingCount == 0, "\(source.id) still has entries pending")
        }
        for destination in InboxSimulation.destinations {
            let stream = simulation.streams[destination, default: []]
            let applied = try Self.applied(stream)
            for source in simulation.sources {
                let expected = source.records.enumerated().flatMap { index, destinations in
                    destinations[destination, default: []].map { (UInt64(index + 1), $0) }
                }
                let got = applied[source.id, default: []]
                let difference = Self.firstDifference(got, expected)
                #expect(difference == nil, "\(source.id) → \(destination), seed \(seed): \(got.count) events applied of \(expected.count), first wrong at \(difference ?? 0)")
            }
            // The same stream read in two parts, the reader restored between them from its
            // encoded state, decides the same.
            let cut = stream.count / 2
            var first = InboxReader()
            var decisions = stream[..<cut].enumerated().map { first.read($1, at: UInt64($0 + 1)) }
            var second = InboxReader(state: try InboxStateCodec.decodeReader(InboxStateCodec.encode(first.state)[...]))
            decisions += stream[cut...].enumerated().map { second.read($1, at: UInt64(cut + $0 + 1)) }
            var whole = InboxReader()
            #expect(decisions == stream.enumerated().map { whole.read($1, at: UInt64($0 + 1)) })
        }
        #expect(simulation.copiesDropped > 0 && simulation.outOfOrderStores > 0, "the run exercised copies and gaps")
    }

    static func firstDifference(_ got: [(UInt64, InboxEvent)], _ expected: [(UInt64, InboxEvent)]) -> Int? {
        if let index = zip(got.indices, expected.indices).first(where: { got[$0] != expected[$1] })?.0 { return index }
        return got.count == expected.count ? nil : min(got.count, expected.count)
    }

    /// What the reader applies from `stream`, per source: each event with its journal record.
    static func applied(_ stream: [InboxMessage]) throws -> [InboxSource: [(UInt64, InboxEvent)]] {
        var reader = InboxReader()
        var applied: [InboxSource: [(UInt64, InboxEvent)]] = [:]
        for (offset, message) in stream.enumerated() {
            let decoded = try InboxCodec.decode(InboxCodec.encode(message))
            guard let outcome = reader.read(decoded, at: UInt64(offset + 1)) else { continue }
            for entry in decoded.entries[outcome.applied] {
                applied[message.source, default: []] += entry.events.map { (entry.journalSequence, $0) }
            }
        }
        return applied
    }
}

/// Sources publishing to two account partitions' streams over connections that lose messages,
/// lose answers, answer late and in any order, and die; their replacements restore the outbox
/// from the last snapshot and replay the journal after it.
struct InboxSimulation {
    static let destinations: [UInt16] = [0, 1]

    struct Source {
        let id: InboxSource
        var outbox: InboxOutbox
        /// The journal: record n's events per destination at index n - 1.
        var records: [[UInt16: [InboxEvent]]] = []
        var snapshot: (records: Int, state: [UInt8])
        /// Sent, not yet at the stream, in order.
        var connection: [InboxOutbox.Publish] = []
        /// Outcomes not yet told to the outbox (answers come late and in any order).
        var answers: [(publish: InboxOutbox.Publish, stored: Bool)] = []
        /// What dead predecessors sent and is still on its way, arriving at any time or never.
        var ghosts: [InboxOutbox.Publish] = []
    }

    var random: SeededGenerator
    var sources: [Source]
    var streams: [UInt16: [InboxMessage]] = [:]
    private(set) var copiesDropped = 0
    private(set) var outOfOrderStores = 0

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 | 1)
        sources = [InboxSource(space: .boards, index: 0), InboxSource(space: .boards, index: 9),
                   InboxSource(space: .accounts, index: 1)].map {
            Source(id: $0, outbox: InboxOutbox(source: $0),
                   snapshot: (0, InboxStateCodec.encode(InboxOutbox.State())))
        }
    }

    mutating func run(steps: Int) {
        for _ in 0..<steps {
            let which = Int.random(in: 0..<sources.count, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<25: commitRecord(which)
            case 25..<32: send(which, sources[which].outbox.publishes())
            case 32..<60: reachTheStream(which, mayLose: true)
            case 60..<85: answer(which)
            case 85..<89: arriveFromTheDead(which)
            case 89..<99: sources[which].snapshot = (sources[which].records.count,
                                                      InboxStateCodec.encode(sources[which].outbox.state))
            default: crash(which)
            }
        }
    }

    /// No more losses: everything sent arrives and is answered until nothing is pending.
    mutating func settle() {
        for _ in 0..<10_000 {
            var busy = false
            for which in sources.indices {
                while !sources[which].ghosts.isEmpty { arriveFromTheDead(which) }
                let publishes = sources[which].outbox.publishes()
                if !publishes.isEmpty { send(which, publishes); busy = true }
                while !sources[which].connection.isEmpty { reachTheStream(which, mayLose: false); busy = true }
                while !sources[which].answers.isEmpty { answer(which); busy = true }
            }
            if !busy { return }
        }
    }

    private mutating func commitRecord(_ which: Int) {
        let journalSequence = UInt64(sources[which].records.count + 1)
        var record: [UInt16: [InboxEvent]] = [:]
        for destination in Self.destinations where Bool.random(using: &random) {
            let users = (0..<Int.random(in: 1...3, using: &random)).map { _ in UInt64.random(in: 1...50, using: &random) }
            record[destination] = users.map {
                InboxEvent(user: $0, name: "order.changed", data: Array("\(sources[which].id)#\(journalSequence)u\($0)".utf8))
            }
        }
        sources[which].records.append(record)
        sources[which].outbox.add(journalSequence: journalSequence, at: 1_796_099_188_971, eventsByDestination: Self.grouped(record))
    }

    private mutating func reachTheStream(_ which: Int, mayLose: Bool) {
        guard !sources[which].connection.isEmpty else { return }
        let publish = sources[which].connection.removeFirst()
        let roll = Int.random(in: 0..<100, using: &random)
        let stored = !mayLose || roll >= 15
        if stored {
            var stream = streams[publish.destination, default: []]
            let first = publish.message.entries[0].outboxSequence
            let last = stream.last(where: { $0.source == publish.message.source })?.entries.last?.outboxSequence ?? 0
            if first <= last { copiesDropped += 1 } else if first > last + 1 { outOfOrderStores += 1 }
            stream.append(publish.message)
            streams[publish.destination] = stream
        }
        // Stored with its answer lost, or lost: both are a failure to the sender.
        let answered = stored && (!mayLose || roll >= 25)
        sources[which].answers.append((publish, answered))
    }

    private mutating func answer(_ which: Int) {
        guard !sources[which].answers.isEmpty else { return }
        let pick = Int.random(in: 0..<sources[which].answers.count, using: &random)
        let (publish, stored) = sources[which].answers.remove(at: pick)
        if stored {
            sources[which].outbox.acknowledged(publish)
        } else {
            _ = sources[which].outbox.failed(publish)
        }
    }

    /// The source's node dies: what it had sent may still arrive later or never; its answers
    /// are lost. The next owner restores the last snapshot and replays the journal after it; its
    /// next `publishes` sends what the snapshot held and what the replay added.
    private mutating func crash(_ which: Int) {
        let source = sources[which]
        let state = try! InboxStateCodec.decodeOutbox(source.snapshot.state[...])
        sources[which].ghosts += source.connection
        sources[which].connection = []
        sources[which].answers = []
        sources[which].outbox = InboxOutbox(source: source.id, state: state)
        for (offset, record) in source.records.enumerated().dropFirst(source.snapshot.records) {
            sources[which].outbox.add(journalSequence: UInt64(offset + 1), at: 1_796_099_188_971, eventsByDestination: Self.grouped(record))
        }
    }

    private mutating func arriveFromTheDead(_ which: Int) {
        guard !sources[which].ghosts.isEmpty else { return }
        let publish = sources[which].ghosts.removeFirst()
        guard Bool.random(using: &random) else { return }
        streams[publish.destination, default: []].append(publish.message)
    }

    private mutating func send(_ which: Int, _ publishes: [InboxOutbox.Publish]) {
        sources[which].connection += publishes
    }

    static func grouped(_ record: [UInt16: [InboxEvent]]) -> [(destination: UInt16, events: [InboxEvent])] {
        record.keys.sorted().map { ($0, record[$0]!) }
    }
}
