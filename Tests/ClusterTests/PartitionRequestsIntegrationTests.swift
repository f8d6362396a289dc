// Requests routed to a partition's owner over a real nats-server: a request waits for an owner
// that appears within the bound, gives up after it, is carried out once by one of two owners in
// the queue group, goes past a stale owner that refuses it, and is never sent twice when its
// answer does not come.
import Cluster
import Foundation
import NATSClient
import NATSTestSupport
import Synchronization
import Testing

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct PartitionRequestsIntegrationTests {
    let partition = PartitionID(space: .boards, index: 5)

    /// Counts the requests a test owner was handed.
    final class Handled: Sendable {
        private let count = Atomic<Int>(0)
        func add() { count.add(1, ordering: .relaxed) }
        var total: Int { count.load(ordering: .relaxed) }
    }

    func echo(_ requests: PartitionRequests, prefix: String, counting handled: Handled) throws -> NATSSubscription {
        try requests.serve(partition) { payload, responder in
            handled.add()
            responder.answer(Array(prefix.utf8) + payload)
        }
    }

    @Test func aRequestWaitsForAnOwnerThatAppearsWithinTheBound() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let requester = PartitionRequests(connection: try await connectClient(to: cluster, name: "gateway"))
            let owner = PartitionRequests(connection: try await connectClient(to: cluster, name: "owner"))
            let handled = Handled()
            async let reply = requester.request(partition, payload: Array("hello".utf8))
            try await Task.sleep(for: .milliseconds(400))
            let subscription = try echo(owner, prefix: "p5:", counting: handled)
            try await owner.connection.flush()
            #expect(try await reply.get() == Array("p5:hello".utf8))
            #expect(handled.total == 1)
            subscription.unsubscribe()
        }
    }

    @Test func withNoOwnerARequestGivesUpAfterTheBoundCarriedOutNowhere() async throws {
        try await withSharedCluster(size: 1) { cluster in
            var requester = PartitionRequests(connection: try await connectClient(to: cluster, name: "gateway"))
            requester.policy = RoutePolicy(boundMilliseconds: 600)
            let started = ContinuousClock.now
            let result = await requester.request(partition, payload: [1])
            let waited = ContinuousClock.now - started
            guard case .failure(.noOwner(let failed, let attempts)) = result else {
                Issue.record("expected no owner, got \(result)")
                return
            }
            #expect(failed == partition && attempts > 3)
            #expect(waited >= .milliseconds(600) && waited < .seconds(5))
        }
    }

    @Test func oneOfTwoOwnersInTheQueueGroupCarriesOutEachRequest() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let requester = PartitionRequests(connection: try await connectClient(to: cluster, name: "gateway"))
            let (first, second) = (Handled(), Handled())
            let owners = [PartitionRequests(connection: try await connectClient(to: cluster, name: "owner-1")),
                          PartitionRequests(connection: try await connectClient(to: cluster, name: "owner-2"))]
            let subscriptions = [try echo(owners[0], prefix: "1:", counting: first), try echo(owners[1], prefix: "2:", counting: second)]
            for owner in owners { try await owner.connection.flush() }
            for index in 0..<60 {
                let body = try await requester.request(partition, payload: Array("\(index)".utf8)).get()
                #expect(body == Array("1:\(index)".utf8) || body == Array("2:\(index)".utf8))
            }
            #expect(first.total + second.total == 60)
            subscriptions.forEach { $0.unsubscribe() }
        }
    }

    @Test func aStaleOwnersRefusalIsSentOnToTheOwner() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let requester = PartitionRequests(connection: try await connectClient(to: cluster, name: "gateway"))
            let stale = PartitionRequests(connection: try await connectClient(to: cluster, name: "stale"))
            let owner = PartitionRequests(connection: try await connectClient(to: cluster, name: "owner"))
            let (refused, carriedOut) = (Handled(), Handled())
            let staleSubscription = try stale.serve(partition) { _, responder in
                refused.add()
                responder.refuseAsNotOwner()
            }
            let ownerSubscription = try echo(owner, prefix: "", counting: carriedOut)
            try await stale.connection.flush()
            try await owner.connection.flush()
            for index in 0..<40 {
                #expect(try await requester.request(partition, payload: [UInt8(index)]).get() == [UInt8(index)])
            }
            #expect(carriedOut.total == 40)
            #expect(refused.total > 0, "the queue group never picked the stale owner: the test tested nothing")
            staleSubscription.unsubscribe()
            ownerSubscription.unsubscribe()
        }
    }

    @Test func aRequestWhoseAnswerDoesNotComeIsNotSentAgain() async throws {
        try await withSharedCluster(size: 1) { cluster in
            var requester = PartitionRequests(connection: try await connectClient(to: cluster, name: "gateway"))
            requester.timeoutMilliseconds = 300
            let owner = PartitionRequests(connection: try await connectClient(to: cluster, name: "silent-owner"))
            let handled = Handled()
            let subscription = try owner.serve(partition) { _, _ in handled.add() }
            try await owner.connection.flush()
            #expect(await requester.request(partition, payload: [9]) == .failure(.outcomeUnknown(partition)))
            try await Task.sleep(for: .milliseconds(300))
            #expect(handled.total == 1)
            subscription.unsubscribe()
        }
    }

    @Test func anAnswerWithAStatusThisNodeDoesNotKnowIsAnUnknownOutcome() async throws {
        try await withSharedCluster(size: 1) { cluster in
            let requester = PartitionRequests(connection: try await connectClient(to: cluster, name: "gateway"))
            let owner = try await connectClient(to: cluster, name: "odd-owner")
            let subscription = try owner.subscribe(to: PartitionRequests.subject(of: partition), queueGroup: PartitionRequests.queueGroup) { message in
                if let replyTo = message.replyTo { try? owner.publish(replyTo, payload: [7, 1, 2]) }
            }
            try await owner.flush()
            #expect(await requester.request(partition, payload: [1]) == .failure(.outcomeUnknown(partition)))
            subscription.unsubscribe()
        }
    }
}
