// How long to wait before the next connection attempt: exponential, capped, with jitter, so a
// campus of phones that lost the server at once does not come back at once.
import Foundation

/// Exponential backoff with "equal jitter": after `n` consecutive failures the wait is drawn
/// uniformly from [d/2, d] where d = min(maximum, initial × multiplier^n). Half the delay is
/// kept so a retry never comes back immediately; the other half spreads clients apart.
public struct ReconnectBackoff: Sendable, Hashable {
    /// The first wait (after a connection that was up drops, or after the first failure).
    /// Default 0.5 s: a dropped mobile connection usually comes back within a second.
    public var initial: Duration
    /// Growth per consecutive failure. Default 2.
    public var multiplier: Double
    /// The longest wait. Default 30 s: an app that comes back online reconnects within half a
    /// minute without every phone polling a server that is down.
    public var maximum: Duration

    public init(initial: Duration = .milliseconds(500), multiplier: Double = 2, maximum: Duration = .seconds(30)) {
        precondition(initial > .zero && multiplier >= 1 && maximum >= initial, "a backoff must grow from a positive delay")
        self.initial = initial
        self.multiplier = multiplier
        self.maximum = maximum
    }

    /// The ceiling before jitter after `failures` consecutive failures (0: none yet).
    public func ceiling(afterFailures failures: Int) -> Duration {
        let initialSeconds = Double(initial.wholeMilliseconds) / 1000
        let maximumSeconds = Double(maximum.wholeMilliseconds) / 1000
        let exponent = Double(min(failures, 64))
        let seconds = min(maximumSeconds, initialSeconds * pow(multiplier, exponent))
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// The wait before the next attempt.
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> Duration {
        let ceiling = ceiling(afterFailures: failures).wholeMilliseconds
        let floor = ceiling / 2
        return .milliseconds(Int64.random(in: floor...max(floor, ceiling), using: &generator))
    }
}
