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

    // MARK: The outbox

    @Test func numbersMessagesPerPartitionInJournalOrder() {
        var outbox = InboxOutbox(source: Self.boardSource)
        let first = outbox.add(journalSequence: 10, at: 1_796_099_188_971, eventsByDestination: [(0, Self.events(ofRecord: 10)),
                                                                          (5, Self.events(ofRecord: 10, users: [5, 69]))])
        let second = outbox.add(journalSequence: 11, at: 1_796_099_188_971, eventsByDestination: [(5, Self.events(ofRecord: 11))])
        let nothing = outbox.add(journalSequence: 12, at: 1_796_099_188_971, eventsByDestination: [(0, [])])
        #expect(first.map(\.destination) == [0, 5])
        #expect(first.map(\.message.outboxSequence) == [1, 1])
        #expect(first[1].message.events.map(\.user) == [5, 69])
        #expect(second.map(\.message.outboxSequence) == [2])
        #expect(second[0].message.journalSequence == 11)
        #expect(nothing.isEmpty)
        #expect(outbox.pendingCount == 3)
    }

    @Test func aFailureSendsAgainEveryUndeliveredMessageIncludingAcknowledgedLaterOnes() {
        var outbox = InboxOutbox(source: Self.boardSource)
        let sent = (1...4).flatMap { outbox.add(journalSequence: $0, at: 1_796_099_188_971, eventsByDestination: [(0, Self.events(ofRecord: $0))]) }
        outbox.acknowledged(sent[0])
        outbox.acknowledged(sent[2])   // stored, but the reader dropped it if the second was lost
        let again = outbox.failed(sent[1])
        #expect(again.map(\.message.outboxSequence) == [2, 3, 4])
        #expect(Set(again.map(\.attempt)).count == 1 && again[0].attempt > sent[1].attempt)
        #expect(outbox.pendingCount == 3)
    }

    @Test func answersToAnEarlierAttemptChangeNothing() {
        var outbox = InboxOutbox(source: Self.boardSource)
        let sent = (1...2).flatMap { outbox.add(journalSequence: $0, at: 1_796_099_188_971, eventsByDestination: [(0, Self.events(ofRecord: $0))]) }
        let again = outbox.failed(sent[0])
        outbox.acknowledged(sent[0])
        outbox.acknowledged(sent[1])
        #expect(outbox.failed(sent[1]).isEmpty)
        #expect(outbox.pendingCount == 2)
        again.forEach { outbox.acknowledged($0) }
        #expect(outbox.pendingCount == 0)
    }

    @Test func aMessageIsDeliveredOnlyOnceEveryEarlierOneIs() {
        var outbox = InboxOutbox(source: Self.boardSource)
        let sent = (1...3).flatMap { outbox.add(journalSequence: $0, at: 1_796_099_188_971, eventsByDestination: [(0, Self.events(ofRecord: $0))]) }
        outbox.acknowledged(sent[2])
        outbox.acknowledged(sent[1])
        #expect(outbox.state.destinations[0]?.pending.map(\.outboxSequence) == [1, 2, 3])
        outbox.acknowledged(sent[0])
        #expect(outbox.state.destinations[0]?.pending == [])
        #expect(outbox.state.destinations[0]?.nextSequence == 4)
    }

    @Test func aRestoredOutboxSendsWhatWasPendingThenNumbersOn() {
        var outbox = InboxOutbox(source: Self.boardSource)
        let sent = (1...3).flatMap { outbox.add(journalSequence: $0, at: 1_796_099_188_971, eventsByDestination: [(2, Self.events(ofRecord: $0))]) }
        outbox.acknowledged(sent[0])
        var restored = InboxOutbox(source: Self.boardSource, state: outbox.state)
        #expect(restored.resendAll().map(\.message) == [sent[1].message, sent[2].message])
        let next = restored.add(journalSequence: 4, at: 1_796_099_188_971, eventsByDestination: [(2, Self.events(ofRecord: 4))])
        #expect(next.map(\.message.outboxSequence) == [4])
    }

    // MARK: The reader

    @Test func theReaderAppliesEachSourcesNextMessageOnly() {
        var outbox = InboxOutbox(source: Self.boardSource)
        let sent = (1...3).flatMap { outbox.add(journalSequence: $0, at: 1_796_099_188_971, eventsByDestination: [(0, Self.events(ofRecord: $0))]) }
        var reader = InboxReader()
        #expect(reader.read(sent[1].message, at: 1) == .outOfOrder(expected: 1))
        #expect(reader.read(sent[0].message, at: 2) == .apply)
        #expect(reader.read(sent[0].message, at: 3) == .duplicate)
        #expect(reader.read(sent[1].message, at: 4) == .apply)
        #expect(reader.read(sent[2].message, at: 4) == .alreadyRead)
        reader.skipUnreadable(at: 5)
        #expect(reader.read(sent[2].message, at: 6) == .apply)
        #expect(reader.state == InboxReader.State(position: 6, applied: [Self.boardSource: 3]))
    }

    // MARK: Both, over a stream that loses, doubles and reorders

    @Test(arguments: 0..<40)
    func everyEventIsAppliedOnceInJournalOrder(seed: UInt64) throws {
        var simulation = InboxSimulation(seed: seed)
        simulation.run(steps: 1_500)
        simulation.settle()
        for source in simulation.sources {
            #expect(source.outbox.pendingCount == 0, "\(source.id) still has messages pending")
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
            if reader.read(decoded, at: UInt64(offset + 1)) == .apply {
                applied[message.source, default: []] += decoded.events.map { (decoded.journalSequence, $0) }
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
            case 0..<30: commitRecord(which)
            case 30..<60: reachTheStream(which, mayLose: true)
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
        send(which, sources[which].outbox.add(journalSequence: journalSequence, at: 1_796_099_188_971, eventsByDestination: Self.grouped(record)))
    }

    private mutating func reachTheStream(_ which: Int, mayLose: Bool) {
        guard !sources[which].connection.isEmpty else { return }
        let publish = sources[which].connection.removeFirst()
        let roll = Int.random(in: 0..<100, using: &random)
        let stored = !mayLose || roll >= 15
        if stored {
            var stream = streams[publish.destination, default: []]
            if let last = stream.last(where: { $0.source == publish.message.source }) {
                if publish.message.outboxSequence <= last.outboxSequence { copiesDropped += 1 }
                else if publish.message.outboxSequence > last.outboxSequence + 1 { outOfOrderStores += 1 }
            } else if publish.message.outboxSequence > 1 {
                outOfOrderStores += 1
            }
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
            send(which, sources[which].outbox.failed(publish))
        }
    }

    /// The source's node dies: what it had sent may still arrive later or never; its answers
    /// are lost. The next owner restores the last snapshot, sends what it held, then replays the
    /// journal after it.
    private mutating func crash(_ which: Int) {
        let source = sources[which]
        let state = try! InboxStateCodec.decodeOutbox(source.snapshot.state[...], of: source.id)
        sources[which].ghosts += source.connection
        sources[which].connection = []
        sources[which].answers = []
        sources[which].outbox = InboxOutbox(source: source.id, state: state)
        send(which, sources[which].outbox.resendAll())
        for (offset, record) in source.records.enumerated().dropFirst(source.snapshot.records) {
            send(which, sources[which].outbox.add(journalSequence: UInt64(offset + 1), at: 1_796_099_188_971, eventsByDestination: Self.grouped(record)))
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
