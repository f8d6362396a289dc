import Foundation
@testable import NATSClient
import NATSProtocol
import NATSTestSupport
import Synchronization
import Testing

/// JetStream against a real 3-node cluster.
@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct JetStreamTests {
    private func journal(_ name: String, replicas: Int = 3) -> StreamConfiguration {
        var configuration = StreamConfiguration(name: name, subjects: ["\(name).>"])
        configuration.replicas = replicas
        configuration.maxMessagesPerSubject = 1_000
        return configuration
    }

    @Test func aReplicatedStreamAcknowledgesInOrderAndReplaysFromASequence() async throws {
        try await withSharedCluster { cluster in
            let client = try await connectClient(to: cluster)
            let jetStream = JetStream(connection: client)
            let info = try await jetStream.createStream(journal("J1"))
            #expect(info.configuration.replicas == 3)
            #expect(info.configuration.maxMessagesPerSubject == 1_000)
            #expect(info.configuration.subjects == ["J1.>"])
            for index in 1...120 {
                let ack = try await jetStream.publish("J1.p\(index % 3)", payload: Array("record \(index)".utf8))
                #expect(ack == PublishAckMatcher(stream: "J1", sequence: UInt64(index)))
            }
            let state = try await jetStream.streamInfo("J1")
            #expect(state.lastSequence == 120)
            #expect(state.messages == 120)
            #expect(state.leader != nil)
            #expect(state.replicaNames.count == 2)

            let reader = jetStream.reader(of: "J1", from: 41)
            var sequences: [UInt64] = []
            var payloads: [String] = []
            while !(await reader.isCaughtUp) || sequences.isEmpty {
                let batch = try await reader.next(maximum: 25)
                #expect(batch.count <= 25)
                sequences += batch.map(\.sequence)
                payloads += batch.map { String(decoding: $0.payload, as: UTF8.self) }
                if batch.isEmpty { break }
            }
            #expect(sequences == Array(41...120))
            #expect(payloads == (41...120).map { "record \($0)" })
            #expect(try await reader.next().isEmpty)
            // What is appended after catching up is read next. A read takes what the consumer's
            // server holds at that moment, which may trail the acknowledgement by a moment.
            _ = try await jetStream.publish("J1.p0", payload: Array("late".utf8))
            var late: [UInt64] = []
            for _ in 0..<50 where late.isEmpty {
                late = try await reader.next().map(\.sequence)
                if late.isEmpty { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(late == [121])
            #expect(try await reader.next().isEmpty)
            await reader.close()

            let filtered = jetStream.reader(of: "J1", from: 1, subject: "J1.p1")
            let onP1 = try await filtered.next(maximum: 1_000)
            #expect(onP1.map(\.sequence) == stride(from: 1, through: 120, by: 3).map(UInt64.init))
            #expect(onP1.allSatisfy { $0.subject == "J1.p1" })
            await filtered.close()
            await client.close()
        }
    }

    @Test func aFencedAppendIsRefusedAfterAConcurrentAppend() async throws {
        try await withSharedCluster { cluster in
            let owner = try await connectClient(to: cluster, first: 0, name: "stale-owner")
            let usurper = try await connectClient(to: cluster, first: 1, name: "new-owner")
            let ownerStream = JetStream(connection: owner)
            let usurperStream = JetStream(connection: usurper)
            _ = try await ownerStream.createStream(journal("J2"))
            let first = try await ownerStream.publish("J2.p1", payload: [1], options: PublishOptions(expectedLastSequence: 0))
            #expect(first.sequence == 1)
            // Both believe the journal ends at 1; the other node appends first.
            _ = try await usurperStream.publish("J2.p1", payload: [2], options: PublishOptions(expectedLastSequence: 1))
            await #expect(throws: NATSClientError.self) {
                _ = try await ownerStream.publish("J2.p1", payload: [3], options: PublishOptions(expectedLastSequence: 1))
            }
            do {
                let error = try #require(await jetStreamError { _ = try await ownerStream.publish("J2.p1", payload: [3], options: PublishOptions(expectedLastSequence: 1)) }, "a stale append was stored")
                #expect(error.errorCode == JetStreamError.wrongLastSequence)
                #expect(error.isWrongLastSequence)
            }
            // The same fence per subject.
            do {
                let error = try #require(await jetStreamError { _ = try await ownerStream.publish("J2.p1", payload: [4], options: PublishOptions(expectedLastSubjectSequence: 1)) }, "a stale subject append was stored")
                #expect(error.errorCode == JetStreamError.wrongLastSequence)
            }
            let after = try await ownerStream.publish("J2.p2", payload: [5], options: PublishOptions(expectedLastSubjectSequence: 0))
            #expect(after.sequence == 3)
            let state = try await ownerStream.streamInfo("J2")
            #expect(state.lastSequence == 3)
            #expect(try await ownerStream.message(in: "J2", sequence: 2).payload == [2])
            await owner.close()
            await usurper.close()
        }
    }

    /// What a journal's pipeline relies on: publishes queued one after another with callbacks
    /// are stored in that order, and each callback hears its own acknowledgement or refusal.
    @Test func publishesWithCallbacksArePipelinedAndEachHearsItsAnswer() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            let jetStream = JetStream(connection: client)
            _ = try await jetStream.createStream(journal("J6", replicas: 1))
            let heard = Mutex<[Int: Result<PublishAck, NATSClientError>]>([:])
            func hear(_ index: Int) -> @Sendable (Result<PublishAck, NATSClientError>) -> Void {
                { result in heard.withLock { $0[index] = result } }
            }
            for index in 1...50 {
                try jetStream.startPublish("J6.a", payload: [UInt8(index)],
                                          options: PublishOptions(messageID: "m\(index)", expectedLastSequence: UInt64(index - 1)),
                                          onAcknowledgement: hear(index))
            }
            try jetStream.startPublish("J6.a", payload: [0], options: PublishOptions(expectedLastSequence: 3), onAcknowledgement: hear(51))
            try jetStream.startPublish("J6.a", payload: [7], options: PublishOptions(messageID: "m7"), onAcknowledgement: hear(52))
            try jetStream.startPublish("nowhere.x", payload: [0], onAcknowledgement: hear(53))
            try await eventually("every answer") { heard.withLock { $0.count } == 53 }
            let answers = heard.withLock { $0 }
            for index in 1...50 {
                #expect(try answers[index]?.get() == PublishAck(stream: "J6", sequence: UInt64(index), isDuplicate: false))
            }
            guard case .failure(.jetStream(let fenced))? = answers[51] else { Issue.record("\(String(describing: answers[51]))"); return }
            #expect(fenced.isWrongLastSequence)
            #expect(try answers[52]?.get() == PublishAck(stream: "J6", sequence: 7, isDuplicate: true))
            guard case .failure(.jetStream(let absent))? = answers[53] else { Issue.record("\(String(describing: answers[53]))"); return }
            #expect(absent.code == 503)
            #expect(try await jetStream.streamInfo("J6").lastSequence == 50)
            // The server's own answers have the compact shape; the JSON path stays for the rest.
            var headers = NATSHeaders()
            headers.set("Nats-Msg-Id", "m51")
            for duplicate in [false, true] {
                let raw = try await client.request("J6.a", payload: [1], headers: headers)
                #expect(PublishAck(compact: raw.payload) == PublishAck(stream: "J6", sequence: 51, isDuplicate: duplicate),
                        "\(String(decoding: raw.payload, as: UTF8.self))")
            }
            await client.close()
        }
    }

    @Test func aRepeatedMessageIDIsStoredOnce() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            let jetStream = JetStream(connection: client)
            _ = try await jetStream.createStream(journal("J3", replicas: 1))
            let first = try await jetStream.publish("J3.a", payload: [1], options: PublishOptions(messageID: "order-1"))
            let again = try await jetStream.publish("J3.a", payload: [1], options: PublishOptions(messageID: "order-1"))
            #expect(!first.isDuplicate)
            #expect(again.isDuplicate)
            #expect(again.sequence == first.sequence)
            #expect(try await jetStream.streamInfo("J3").messages == 1)
            await client.close()
        }
    }

    /// What a writer retrying an append of unknown outcome relies on: a repeat of a stored
    /// message id, with the fences it was first sent with (stale by now), is acknowledged as a
    /// duplicate at the first copy's sequence, not refused by its fences.
    @Test func aRepeatOfAStoredMessageIDWithItsOriginalFencesIsADuplicateNotARefusal() async throws {
        try await withSharedCluster { cluster in
            let client = try await connectClient(to: cluster)
            let jetStream = JetStream(connection: client)
            _ = try await jetStream.createStream(journal("J5", replicas: 3))
            func append(_ sequence: UInt64, id: String? = nil) async throws(NATSClientError) -> PublishAck {
                var headers = NATSHeaders()
                if sequence > 1 { headers.set("Nats-Expected-Last-Msg-Id", "w:\(sequence - 1)") }
                return try await jetStream.publish("J5.a", payload: [UInt8(sequence)],
                                                   options: PublishOptions(messageID: id ?? "w:\(sequence)", expectedLastSequence: sequence - 1),
                                                   headers: headers)
            }
            for sequence in 1...3 as ClosedRange<UInt64> {
                #expect(try await append(sequence).sequence == sequence)
            }
            let second = try await append(2)
            #expect(second.isDuplicate && second.sequence == 2)
            let first = try await append(1)
            #expect(first.isDuplicate && first.sequence == 1)
            do throws(NATSClientError) {
                _ = try await append(2, id: "other:2")
                Issue.record("another writer's append fenced on 1 was stored")
            } catch .jetStream(let error) {
                #expect(error.isWrongLastSequence, "\(error)")
            }
            #expect(try await jetStream.streamInfo("J5").messages == 3)
            await client.close()
        }
    }

    @Test func messagesAreReadBySequenceAndLastBySubjectWithHeaders() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let client = try await connectClient(to: cluster)
            let jetStream = JetStream(connection: client)
            _ = try await jetStream.createStream(journal("J4", replicas: 1))
            var headers = NATSHeaders()
            headers.append("Bangbang-Kind", "order.accepted")
            _ = try await jetStream.publish("J4.x", payload: Array("one".utf8), headers: headers)
            _ = try await jetStream.publish("J4.y", payload: Array("two".utf8))
            _ = try await jetStream.publish("J4.x", payload: Array("three".utf8))
            let first = try await jetStream.message(in: "J4", sequence: 1)
            #expect(first.subject == "J4.x")
            #expect(first.payload == Array("one".utf8))
            #expect(first.headers?["Bangbang-Kind"] == "order.accepted")
            let last = try await jetStream.lastMessage(in: "J4", subject: "J4.x")
            #expect(last.sequence == 3)
            #expect(last.payload == Array("three".utf8))
            do {
                let error = try #require(await jetStreamError { _ = try await jetStream.message(in: "J4", sequence: 99) }, "a missing message was found")
                #expect(error.errorCode == JetStreamError.noMessageFound)
            }
            do {
                let error = try #require(await jetStreamError { _ = try await jetStream.streamInfo("NOPE") }, "a missing stream was found")
                #expect(error.errorCode == JetStreamError.streamNotFound)
            }
            var changed = journal("J4", replicas: 1)
            changed.maxMessagesPerSubject = 1
            let updated = try await jetStream.updateStream(changed)
            #expect(updated.configuration.maxMessagesPerSubject == 1)
            #expect(updated.messages == 2)
            try await jetStream.deleteStream("J4")
            await #expect(throws: NATSClientError.self) { _ = try await jetStream.streamInfo("J4") }
            await client.close()
        }
    }
}

/// Compares an acknowledgement's stream and sequence.
struct PublishAckMatcher: Equatable {
    var stream: String
    var sequence: UInt64
}

func == (ack: PublishAck, matcher: PublishAckMatcher) -> Bool {
    ack.stream == matcher.stream && ack.sequence == matcher.sequence && !ack.isDuplicate
}
