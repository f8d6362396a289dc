// The connection's time-driven behaviour under a manual clock and a scripted server: backoff
// between attempts, its reset once online, request timeouts, pings that find a dead network.
import BangbangProtocol
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

@Suite(.timeLimit(.minutes(1))) struct ReconnectTests {
    static let backoff = ReconnectBackoff(initial: .seconds(1), multiplier: 2, maximum: .seconds(8))
    /// Long enough to tell apart from backoff waits, which never exceed 8 s.
    static let requestTimeout = Duration.seconds(1000)
    static let pingInterval = Duration.seconds(500)

    static func connection(_ transport: MockTransport, clock: ManualClock, store: any SessionStore = MemorySessionStore(),
                           seed: UInt64 = 7) -> BangbangConnection {
        let url = ServerURL(isSecure: false, host: "127.0.0.1", port: 9)
        let configuration = ConnectionConfiguration(endpoint: ServerEndpoint(url: url), requestTimeout: requestTimeout,
                                                    pingInterval: pingInterval, backoff: backoff)
        return BangbangConnection(configuration: configuration, store: store, transport: transport, clock: clock,
                                  random: SeededGenerator(seed: seed))
    }

    /// The backoff wait the connection is sleeping now, if any.
    static func backoffSleep(_ clock: ManualClock) -> Duration? {
        clock.pendingSleeps.first { $0 <= backoff.maximum }
    }

    @Test func backoffPureFunctionGrowsExponentiallyWithinItsJitterAndCaps() {
        var generator = SeededGenerator(seed: 1)
        let expectedCeilings: [Duration] = [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(8), .seconds(8)]
        for (failures, ceiling) in expectedCeilings.enumerated() {
            #expect(Self.backoff.ceiling(afterFailures: failures) == ceiling)
            for _ in 0..<50 {
                let delay = Self.backoff.delay(afterFailures: failures, using: &generator)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "\(delay) outside [\(ceiling / 2), \(ceiling)]")
            }
        }
        // Jitter spreads clients: 50 draws of the same attempt are not all equal.
        let draws = Set((0..<50).map { _ in Self.backoff.delay(afterFailures: 3, using: &generator) })
        #expect(draws.count > 10)
        #expect(Self.backoff.ceiling(afterFailures: 10_000) == .seconds(8), "no overflow for long outages")
    }

    @Test func attemptsWaitTheJitteredBackoffAndItResetsOnceOnline() async throws {
        let clock = ManualClock()
        let transport = MockTransport(refusals: 5) { request, channel in
            if request["op"] == "info.get" { channel.reply(to: request, ["version": "test"]) }
        }
        let connection = Self.connection(transport, clock: clock)
        let connecting = Task { try await connection.connect() }

        // The same seed as the connection: the same jitter, so each wait is known exactly.
        var expected = SeededGenerator(seed: 7)
        for failures in 0..<5 {
            #expect(await eventually { Self.backoffSleep(clock) != nil }, "no backoff wait after failure \(failures + 1)")
            let wait = Self.backoff.delay(afterFailures: failures, using: &expected)
            #expect(Self.backoffSleep(clock) == wait)
            #expect(transport.attempts == failures + 1, "no attempt may start before the wait is over")
            clock.advance(by: wait - .milliseconds(1))
            #expect(transport.attempts == failures + 1)
            clock.advance(by: .milliseconds(1))
        }
        _ = try await connecting.value
        #expect(transport.attempts == 6)
        #expect(await connection.state == .online)

        // A drop after being online starts again from the first, shortest wait.
        transport.channels.last?.end(code: nil, reason: "network gone")
        #expect(await eventually { Self.backoffSleep(clock) != nil })
        #expect(Self.backoffSleep(clock) == Self.backoff.delay(afterFailures: 0, using: &expected))
        await connection.disconnect()
        #expect(await connection.state == .stopped)
    }

    @Test func aRequestWithoutReplyTimesOutOnTheClockAndADropFailsTheOthers() async throws {
        let clock = ManualClock()
        let transport = MockTransport { _, _ in }  // a server that never answers
        let connection = Self.connection(transport, clock: clock)
        try await connection.connect()

        let unanswered = Task { try await connection.send(GetServerInfo()) }
        #expect(await eventually { transport.channels.first?.operations == ["info.get"] })
        // Only once the request's timer sleeps on the clock does moving the clock expire it.
        #expect(await eventually { clock.pendingSleeps.contains(Self.requestTimeout) })
        clock.advance(by: Self.requestTimeout)
        await #expect(throws: BangbangError.timedOut) { try await unanswered.value }

        let inFlight = Task { try await connection.send(GetServerInfo()) }
        #expect(await eventually { transport.channels.first?.operations.count == 2 })
        transport.channels.first?.end(code: nil, reason: "reset")
        await #expect(throws: BangbangError.connectionLost) { try await inFlight.value }
        await connection.disconnect()
    }

    @Test func aPingLeftUnansweredDropsTheConnectionAndAnotherIsMade() async throws {
        let clock = ManualClock()
        let transport = MockTransport { _, _ in }
        let connection = Self.connection(transport, clock: clock)
        try await connection.connect()
        let first = try #require(transport.channels.first)
        first.answersPings = false

        #expect(await eventually { clock.pendingSleeps.contains(Self.pingInterval) })
        clock.advance(by: Self.pingInterval)
        #expect(await eventually { first.pings == 1 })
        #expect(!first.isClosed, "one ping in flight is not yet a dead connection")
        #expect(await eventually { clock.pendingSleeps.contains(Self.pingInterval) })
        clock.advance(by: Self.pingInterval)
        #expect(await eventually { first.isClosed }, "a second interval without a word means the network is gone")
        #expect(await eventually { Self.backoffSleep(clock) != nil })
        clock.advance(by: Self.backoff.maximum)
        #expect(await eventually { transport.channels.count == 2 })
        await connection.disconnect()
    }

    @Test func aConnectionThatAnswersPingsIsKept() async throws {
        let clock = ManualClock()
        let transport = MockTransport { _, _ in }
        let connection = Self.connection(transport, clock: clock)
        try await connection.connect()
        let channel = try #require(transport.channels.first)
        for round in 1...4 {
            #expect(await eventually { clock.pendingSleeps.contains(Self.pingInterval) })
            clock.advance(by: Self.pingInterval)
            #expect(await eventually { channel.pings == round })
        }
        #expect(!channel.isClosed && transport.attempts == 1)
        await connection.disconnect()
    }
}
