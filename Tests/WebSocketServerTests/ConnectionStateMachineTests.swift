// The connection's timing and slow-consumer rules, on a clock the test moves: no sockets, no
// waiting.
import Testing
@testable import WebSocketServer

@Suite struct ConnectionStateMachineTests {
    /// Milliseconds of a loop clock that only moves when the test says so.
    struct ManualClock {
        var now: Int64 = 1_000_000
        mutating func advance(by milliseconds: Int64) { now += milliseconds }
    }

    var clock = ManualClock()
    let limits = ConnectionStateMachine.Limits(handshakeTimeout: 10_000, pingInterval: 30_000, pongTimeout: 5_000,
                                               closeTimeout: 2_000, maxOutputBytes: 1_024)
    var machine = ConnectionStateMachine()

    /// Moves the clock to the machine's deadline, as the transport would, and reports it.
    mutating func runToDeadline(isOpen: Bool = true) -> ConnectionStateMachine.Action {
        let deadline = machine.deadline!
        #expect(deadline > clock.now, "the deadline is in the past")
        clock.now = deadline
        return machine.deadlineReached(now: clock.now, isOpen: isOpen, limits: limits)
    }

    @Test mutating func aRequestThatMissesTheHandshakeDeadlineIsRejected() {
        machine.awaitRequest(now: clock.now, afterAnswer: false, limits: limits)
        #expect(machine.deadline == clock.now + 10_000)
        #expect(runToDeadline() == .rejectSlowRequest)
    }

    @Test mutating func aKeptAliveConnectionThatGoesQuietIsClosedWithoutAnAnswer() {
        machine.awaitRequest(now: clock.now, afterAnswer: false, limits: limits)
        clock.advance(by: 300)
        machine.awaitRequest(now: clock.now, afterAnswer: true, limits: limits)
        #expect(machine.deadline == clock.now + 10_000)
        #expect(runToDeadline() == .closeIdle)
    }

    @Test mutating func anIdleSocketIsPingedAndClosedWhenNothingAnswers() {
        machine.upgraded(now: clock.now, limits: limits)
        #expect(runToDeadline() == .sendPing)
        #expect(machine.deadline == clock.now + 5_000)
        #expect(runToDeadline() == .endTimedOut(reason: "ping_timeout"))
    }

    @Test mutating func anyInputAfterThePingCountsAsTheAnswer() {
        machine.upgraded(now: clock.now, limits: limits)
        #expect(runToDeadline() == .sendPing)
        clock.advance(by: 4_999)
        machine.bytesArrived(now: clock.now, isOpen: true, limits: limits)
        #expect(machine.deadline == clock.now + 30_000)
        #expect(runToDeadline() == .sendPing, "pinged again after a full idle interval, not closed")
    }

    @Test mutating func trafficPushesThePingBack() {
        machine.upgraded(now: clock.now, limits: limits)
        for _ in 0..<10 {
            clock.advance(by: 29_999)
            machine.bytesArrived(now: clock.now, isOpen: true, limits: limits)
            #expect(machine.deadline == clock.now + 30_000)
        }
        #expect(runToDeadline() == .sendPing)
    }

    @Test mutating func aPeerThatNeverAnswersOurCloseIsEnded() {
        machine.upgraded(now: clock.now, limits: limits)
        clock.advance(by: 100)
        machine.closingStarted(now: clock.now, limits: limits)
        #expect(machine.deadline == clock.now + 2_000)
        // Bytes while closing do not push the deadline back.
        clock.advance(by: 1_000)
        machine.bytesArrived(now: clock.now, isOpen: false, limits: limits)
        #expect(machine.deadline == clock.now + 1_000)
        #expect(runToDeadline(isOpen: false) == .endTimedOut(reason: "close_timeout"))
    }

    @Test mutating func aSocketFoundClosingAtItsIdleDeadlineTimesOutAsAClose() {
        machine.upgraded(now: clock.now, limits: limits)
        #expect(runToDeadline(isOpen: false) == .endTimedOut(reason: "close_timeout"))
    }

    @Test mutating func aBacklogOverTheBoundDropsTheClientOnce() {
        machine.upgraded(now: clock.now, limits: limits)
        #expect(machine.outputQueued(backlog: 0, limits: limits) == nil)
        #expect(machine.outputQueued(backlog: 1_024, limits: limits) == nil, "at the bound is not over it")
        #expect(!machine.isSlowConsumer)
        #expect(machine.outputQueued(backlog: 1_025, limits: limits) == .dropSlowConsumer)
        #expect(machine.isSlowConsumer)
        #expect(machine.outputQueued(backlog: 50_000, limits: limits) == nil, "dropped once, not once per message")
    }
}
