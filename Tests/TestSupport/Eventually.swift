// Waiting on a condition another thread or event loop will make true, instead of sleeping for a
// guessed time: the test goes on as soon as the condition holds, and the timeout only bounds how
// long a broken test takes to fail.

/// Re-checks `condition` until it holds (true) or `timeout` of real time passes (false, after
/// one last check). Checks every `interval`, yielding to other tasks in between.
public func eventually(timeout: Duration = .seconds(10), interval: Duration = .milliseconds(2),
                       _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now.advanced(by: timeout)
    while clock.now < deadline {
        if try await condition() { return true }
        try? await clock.sleep(for: interval)
    }
    return try await condition()
}
