// When a client connection is pinged, timed out or dropped, decided without sockets, so the
// rules can be tested with a clock the test moves. `ClientConnection` feeds it what happened
// (a request awaited, the upgrade, bytes in, a close started, the deadline reached, output
// queued) with the connection loop's time in milliseconds, and performs the action it returns;
// after every input it sets the transport's single deadline to `deadline`.
//
// Timeline of a WebSocket: idle for `pingInterval` → ping, then `pongTimeout` for any input
// (any bytes count, not only the pong) → closed as `ping_timeout`. Every read while open pushes
// the idle deadline back, so a busy connection is never pinged. While closing, the peer has
// `closeTimeout` to send its close frame. Before the upgrade, `handshakeTimeout` bounds each
// request; on a kept-alive connection that already had an answer, running out is just idleness.
//
// The timeouts and the output bound are the same for every connection of a listener, so they are
// not part of the machine: each input takes them as `Limits`, which the listener holds once
// (`ClientConnectionContext`). The machine itself is the few bytes that differ per connection.
//
// Confinement: a value owned by its `ClientConnection`, used on that connection's loop.
package struct ConnectionStateMachine {
    /// What every connection of a listener is timed by, in milliseconds of the loop clock.
    package struct Limits: Sendable, Equatable {
        package var handshakeTimeout: Int64
        package var pingInterval: Int64
        package var pongTimeout: Int64
        package var closeTimeout: Int64
        package var maxOutputBytes: Int

        package init(handshakeTimeout: Int64, pingInterval: Int64, pongTimeout: Int64, closeTimeout: Int64,
                     maxOutputBytes: Int) {
            self.handshakeTimeout = handshakeTimeout
            self.pingInterval = pingInterval
            self.pongTimeout = pongTimeout
            self.closeTimeout = closeTimeout
            self.maxOutputBytes = maxOutputBytes
        }

        package init(_ limits: ConnectionLimits) {
            self.init(handshakeTimeout: limits.handshakeTimeoutMilliseconds, pingInterval: limits.pingIntervalMilliseconds,
                      pongTimeout: limits.pongTimeoutMilliseconds, closeTimeout: limits.closeTimeoutMilliseconds,
                      maxOutputBytes: limits.maxOutputBytes)
        }
    }

    package enum Action: Equatable {
        /// Send a ping and wait for input until `deadline`.
        case sendPing
        /// The first request did not arrive in time: answer 408 and close.
        case rejectSlowRequest
        /// A kept-alive connection went quiet after its answers: close without a word.
        case closeIdle
        /// No input after our ping (`ping_timeout`) or no close frame after ours
        /// (`close_timeout`): end the connection now.
        case endTimedOut(reason: String)
        /// More than `maxOutputBytes` was still queued: send a 1008 close and drop the client.
        case dropSlowConsumer
    }

    private enum Phase {
        case awaitingRequest(hasAnswered: Bool)
        case open(isAwaitingPong: Bool)
        case closing
    }

    /// When the transport should call back (milliseconds of the connection's loop clock).
    package private(set) var deadline: Int64?
    private var phase = Phase.awaitingRequest(hasAnswered: false)
    package private(set) var isSlowConsumer = false

    package init() {}

    /// The connection was admitted, or a plain answer left it open for the next request.
    package mutating func awaitRequest(now: Int64, afterAnswer: Bool, limits: Limits) {
        phase = .awaitingRequest(hasAnswered: afterAnswer)
        deadline = now + limits.handshakeTimeout
    }

    /// The 101 went out: the WebSocket is open and idle.
    package mutating func upgraded(now: Int64, limits: Limits) {
        phase = .open(isAwaitingPong: false)
        deadline = now + limits.pingInterval
    }

    /// Bytes arrived on the WebSocket; `isOpen` is whether it was still open (not closing).
    package mutating func bytesArrived(now: Int64, isOpen: Bool, limits: Limits) {
        guard case .open = phase else { return }
        phase = .open(isAwaitingPong: false)
        if isOpen { deadline = now + limits.pingInterval }
    }

    /// A close handshake is under way (ours or the peer's) and the transport is still up.
    package mutating func closingStarted(now: Int64, limits: Limits) {
        phase = .closing
        deadline = now + limits.closeTimeout
    }

    /// The transport's deadline passed; `isOpen` is whether the WebSocket (if any) is still open.
    package mutating func deadlineReached(now: Int64, isOpen: Bool = true, limits: Limits) -> Action {
        if case .open = phase, !isOpen { phase = .closing }
        switch phase {
        case .awaitingRequest(let hasAnswered):
            return hasAnswered ? .closeIdle : .rejectSlowRequest
        case .open(isAwaitingPong: true):
            return .endTimedOut(reason: "ping_timeout")
        case .open(isAwaitingPong: false):
            phase = .open(isAwaitingPong: true)
            deadline = now + limits.pongTimeout
            return .sendPing
        case .closing:
            return .endTimedOut(reason: "close_timeout")
        }
    }

    /// A message is going out with `backlog` bytes still queued from earlier ones. A peer is slow
    /// when earlier output waits past the limit, not because one message is larger than it.
    package mutating func outputQueued(backlog: Int, limits: Limits) -> Action? {
        guard !isSlowConsumer, backlog > limits.maxOutputBytes else { return nil }
        isSlowConsumer = true
        return .dropSlowConsumer
    }
}
