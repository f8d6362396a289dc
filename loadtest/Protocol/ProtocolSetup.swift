// The set-up every protocol scenario shares, driven from the main thread phase by phase:
// connect runners and publishers, log them in, have the runners ask for verification and the
// administrator approve them. Only then does a scenario's measured phase begin.
//
// The administrator's phone may ask for an SMS code only once a minute, yet several driver
// processes (and runs in quick succession) need it. Its token is therefore kept in a file
// next to the other temporary files and reused with `auth.resume`; an exclusive lock on that
// file serializes the processes of one run, so only the first one asks for a code.
import Foundation
import Glibc
import SocketServer

/// Tags: runners are 0..<R and publishers R..<R+P within a process; the administrator has a
/// tag of its own on worker 0.
enum ProtocolTags {
    static let administrator = 1 << 40
}

struct SetupFailure: Error, CustomStringConvertible {
    var description: String
}

enum ProtocolSetup {
    /// Starts every worker's publishers at their share of the run's total `--rate`: the rate is
    /// split evenly over all publishers, wherever (in whichever process and loop) they run.
    static func startPublishers<W: ProtocolWorker>(_ harness: Harness<W>,
                                                   _ start: @escaping @Sendable (W, Double) -> Void) {
        let perPublisher = harness.options.rate / Double(harness.options.effectivePublishers)
        let publishersPerWorker = harness.onEach { $0.openClients(.publisher).count }
        for (worker, count) in zip(harness.workers, publishersPerWorker) {
            let box = WorkerBox(worker)
            worker.loop.execute { start(box.worker, perPublisher * Double(count)) }
        }
    }

    /// Connects and prepares `runners` approved runners and `publishers` logged-in users.
    static func prepare<W: ProtocolWorker>(_ harness: Harness<W>, runners: Int, publishers: Int) throws(SetupFailure) {
        let options = harness.options
        let phones = PhoneBook(seed: MonotonicClock.nanoseconds() ^ UInt64(getpid()) << 32)
        let loops = harness.workers.count
        let total = runners + publishers
        harness.startOnEach { worker in
            for tag in stride(from: worker.index, to: total, by: loops) {
                worker.participants[tag] = Participant(role: tag < runners ? .runner : .publisher, phone: phones.phone(for: tag))
            }
        }
        harness.connect(count: total)
        harness.wait(timeoutSeconds: max(60, Double(total) / 100), phase: "connecting",
                     progress: { "\(harness.total { $0.opened })/\(total) open, \(harness.total { $0.connectFailures }) failed" },
                     until: { harness.total { $0.pendingConnections } == 0 })
        let failures = harness.total { $0.connectFailures }
        if failures > 0 { throw SetupFailure(description: "\(failures) of \(total) connections failed" + firstFailure(harness)) }

        try runPhase(harness, name: "logging in", count: total) { worker in
            worker.runPhase(worker.clients.filter { $0.isOpen }) { client, done in worker.logIn(client, completion: done) }
        }
        guard runners > 0 else { return }

        try runPhase(harness, name: "requesting verification", count: runners) { worker in
            worker.runPhase(worker.openClients(.runner)) { client, done in worker.submitVerification(client, completion: done) }
        }
        try connectAdministrator(harness, phone: options.adminPhone ?? "")
        let runnerIDs: [Int64] = harness.onEach { worker in
            worker.openClients(.runner).compactMap { worker.participants[$0.tag]?.userID }
        }.flatMap { $0 }
        let administratorWorker = harness.workers[0]
        let box = WorkerBox(administratorWorker)
        administratorWorker.loop.execute {
            let worker = box.worker
            guard let administrator = worker.administrator else { return }
            var pending = runnerIDs[...]
            worker.runPhase(Array(repeating: administrator, count: runnerIDs.count), limit: 32) { administrator, done in
                let id = pending.removeFirst()
                worker.approve(id, by: administrator, completion: done)
            }
        }
        harness.wait(timeoutSeconds: 120, phase: "approving runners",
                     progress: { "\(administratorWorker.loop.queue.sync { administratorWorker.phaseSucceeded })/\(runnerIDs.count) approved" },
                     until: { administratorWorker.loop.queue.sync { administratorWorker.phaseRemaining } == 0 })
        let refused = administratorWorker.loop.queue.sync { administratorWorker.phaseFailed }
        if refused > 0 { throw SetupFailure(description: "\(refused) runner approvals failed" + firstFailure(harness)) }
    }

    /// Logs every open client in as a new user (the connections scenario's --login).
    static func logInEveryone<W: ProtocolWorker>(_ harness: Harness<W>, count: Int) throws(SetupFailure) {
        let phones = PhoneBook(seed: MonotonicClock.nanoseconds() ^ UInt64(getpid()) << 32)
        harness.startOnEach { worker in
            for client in worker.clients where worker.participants[client.tag] == nil {
                worker.participants[client.tag] = Participant(role: .publisher, phone: phones.phone(for: client.tag))
            }
        }
        try runPhase(harness, name: "logging in", count: count) { worker in
            worker.runPhase(worker.clients.filter { $0.isOpen }) { client, done in worker.logIn(client, completion: done) }
        }
    }

    /// Runs one setup phase on every worker and waits for it; any failed step fails the run.
    private static func runPhase<W: ProtocolWorker>(_ harness: Harness<W>, name: String, count: Int,
                                                    _ start: @escaping @Sendable (W) -> Void) throws(SetupFailure) {
        harness.startOnEach(start)
        let finished = harness.wait(timeoutSeconds: max(120, Double(count) / 50), phase: name,
                                    progress: { "\(harness.total { $0.phaseSucceeded })/\(count) done, \(harness.total { $0.phaseFailed }) failed" },
                                    until: { harness.total { $0.phaseRemaining } == 0 })
        let failed = harness.total { $0.phaseFailed }
        if !finished || failed > 0 {
            throw SetupFailure(description: "\(name): \(failed) failed\(finished ? "" : ", the rest timed out")"
                               + firstFailure(harness))
        }
    }

    /// "; first failure: …" from the workers' samples, or nothing.
    static func firstFailure<W: ProtocolWorker>(_ harness: Harness<W>) -> String {
        guard let sample = harness.onEach({ $0.failureSamples.first }).compactMap({ $0 }).first else { return "" }
        return "; first failure: \(sample)"
    }

    /// Connects and logs in the administrator on worker 0, reusing a saved token when one works.
    private static func connectAdministrator<W: ProtocolWorker>(_ harness: Harness<W>, phone: String) throws(SetupFailure) {
        let options = harness.options
        let safeHost = String(options.url.hostHeader.map { $0.isLetter || $0.isNumber ? $0 : "_" })
        let path = "\(NSTemporaryDirectory())/loadtest-admin-\(safeHost)-\(phone.filter(\.isNumber)).token"
        let lock = open(path + ".lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        if lock >= 0 { flock(lock, LOCK_EX) }
        defer {
            if lock >= 0 {
                flock(lock, LOCK_UN)
                close(lock)
            }
        }
        let savedToken = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        let worker = harness.workers[0]
        let box = WorkerBox(worker)
        worker.loop.execute {
            let worker = box.worker
            worker.participants[ProtocolTags.administrator] = Participant(role: .administrator, phone: phone,
                                                                          token: savedToken?.isEmpty == false ? savedToken : nil)
            worker.connect(tags: [ProtocolTags.administrator])
        }
        harness.wait(timeoutSeconds: 30, phase: "administrator", progress: { "connecting" }) {
            worker.loop.queue.sync { worker.pendingConnections == 0 }
        }
        let isOpen = worker.loop.queue.sync { () -> Bool in
            guard let client = worker.clients.first(where: { $0.tag == ProtocolTags.administrator }), client.isOpen else { return false }
            worker.administrator = client
            return true
        }
        guard isOpen else { throw SetupFailure(description: "the administrator could not connect") }
        for attempt in 0..<2 {
            worker.loop.execute {
                let worker = box.worker
                guard let administrator = worker.administrator else { return }
                worker.runPhase([administrator]) { client, done in worker.logIn(client, completion: done) }
            }
            harness.wait(timeoutSeconds: 30, phase: "administrator", progress: { "logging in" }) {
                worker.loop.queue.sync { worker.phaseRemaining == 0 }
            }
            if worker.loop.queue.sync(execute: { worker.phaseSucceeded }) == 1 { break }
            // A stale saved token: forget it and log in with a code.
            let retry = worker.loop.queue.sync { () -> Bool in
                guard worker.participants[ProtocolTags.administrator]?.token != nil, attempt == 0 else { return false }
                worker.participants[ProtocolTags.administrator]?.token = nil
                worker.failureSamples.removeAll()
                return true
            }
            if !retry { throw SetupFailure(description: "the administrator \(phone) could not log in" + firstFailure(harness)) }
        }
        if let token = worker.loop.queue.sync(execute: { worker.participants[ProtocolTags.administrator]?.token }) {
            try? token.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }
}
