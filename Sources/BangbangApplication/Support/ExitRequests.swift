// The library never ends the process. When serving on can only do harm (memory that cannot be
// rebuilt from disk, a cluster node that no longer owns what it serves), the code that finds out
// makes an `ExitRequest` and hands it here; whoever runs the process decides what to do with
// it: `bangbang` exits with its status, a test reads it. Status 75 (EX_TEMPFAIL) asks a
// supervisor to start the process again, which recovers from what is stored.
import Synchronization

public struct ExitRequest: Sendable, Equatable, CustomStringConvertible {
    /// 75, EX_TEMPFAIL: "start me again".
    public static let restartStatus: Int32 = 75

    public let status: Int32
    /// What happened, in words, for the last line the process writes.
    public let reason: String

    public init(status: Int32, reason: String) {
        self.status = status
        self.reason = reason
    }

    /// Stop, for a supervisor to start the process again.
    public static func restart(_ reason: String) -> ExitRequest { ExitRequest(status: restartStatus, reason: reason) }

    public var description: String { "exit \(status): \(reason)" }
}

/// Where exit requests go (any thread). The first request is the one acted on; a handler set
/// later is given a request made before it.
public final class ExitRequests: Sendable {
    private struct State {
        var first: ExitRequest?
        package var handler: (@Sendable (ExitRequest) -> Void)?
    }

    private let state = Mutex(State())

    public init() {}

    /// The request made, if any.
    public var request: ExitRequest? { state.withLock { $0.first } }

    /// Calls `handler` with the first request, now if one was made already.
    public func handle(with handler: @escaping @Sendable (ExitRequest) -> Void) {
        let made = state.withLock { state -> ExitRequest? in
            state.handler = handler
            return state.first
        }
        if let made { handler(made) }
    }

    public func request(_ request: ExitRequest) {
        let handler = state.withLock { state -> (@Sendable (ExitRequest) -> Void)? in
            guard state.first == nil else { return nil }
            state.first = request
            return state.handler
        }
        handler?(request)
    }
}
