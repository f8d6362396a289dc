// The main thread's side of a run: it creates the event loops and workers, moves the run
// through its phases, prints the progress line and gathers the workers' results.
//
// The main thread never touches a worker directly: it hops onto the worker's loop with
// `queue.sync` (a read of a few counters, once per poll) or `loop.execute`. Between phases a
// multi-process child reports "ready" to its parent and waits for "go", so every process
// starts measuring at the same moment.
import Foundation
import SocketServer
import WebSocketProtocol

final class Harness<W: Worker> {
    let options: Options
    let group: EventLoopGroup
    let workers: [W]
    private let startedAt = MonotonicClock.nanoseconds()
    private var cpuAtStart = ProcessResources.cpuTime()
    private var serverCPUAtStart: Int64?
    private var serverWaitAtStart: Int64?
    private var driverWaitAtStart: Int64?
    private var measurementStartedAt = MonotonicClock.nanoseconds()
    private var lastProgress: UInt64 = 0
    private let coordinator = ChildCoordinator()

    init(options: Options, settings: ClientSettings,
         makeWorker: (EventLoop, Int, Int, Options, ClientSettings) -> W) {
        self.options = options
        group = EventLoopGroup(count: options.threads)
        var workers: [W] = []
        for (index, loop) in group.loops.enumerated() {
            workers.append(makeWorker(loop, index, group.loops.count, options, settings))
        }
        self.workers = workers
    }

    /// Starts the measured phase: CPU use (the driver's and, given its pid, the server's) is
    /// reported from here on.
    func markMeasurementStart() {
        let now = MonotonicClock.nanoseconds()
        for worker in workers {
            worker.loop.queue.sync {
                // The connections scenario's timeline is its connect phase, which came before.
                if options.scenario != .connections { worker.timeline = Timeline(origin: now) }
                worker.beginMeasurement()
            }
        }
        cpuAtStart = ProcessResources.cpuTime()
        measurementStartedAt = MonotonicClock.nanoseconds()
        driverWaitAtStart = ProcessResources.runQueueWaitMicroseconds(of: getpid())
        serverWaitAtStart = options.serverPID.flatMap(ProcessResources.runQueueWaitMicroseconds(of:))
        serverCPUAtStart = options.serverPID.flatMap(ProcessResources.cpuMicroseconds(of:))
    }

    /// Runs `body` on every worker's loop, one after another, and returns what each returned.
    func onEach<T>(_ body: (W) -> T) -> [T] {
        workers.map { worker in worker.loop.queue.sync { body(worker) } }
    }

    /// Runs `body` on every worker's loop without waiting.
    func startOnEach(_ body: @escaping @Sendable (W) -> Void) {
        for worker in workers {
            let box = WorkerBox(worker)
            worker.loop.execute { body(box.worker) }
        }
    }

    /// Hands the clients numbered `0..<count` out to the loops round-robin and starts them.
    func connect(count: Int, tagOffset: Int = 0) {
        let loops = workers.count
        startOnEach { worker in
            worker.connect(tags: Array(stride(from: tagOffset + worker.index, to: tagOffset + count, by: loops)))
        }
    }

    /// Polls every 50 ms until `isDone` says so or `timeoutSeconds` pass; prints the progress
    /// line once a second. Returns false on timeout.
    @discardableResult
    func wait(timeoutSeconds: Double, phase: String, progress: () -> String, until isDone: () -> Bool) -> Bool {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeoutSeconds * 1e9)
        while true {
            if isDone() { return true }
            let now = MonotonicClock.nanoseconds()
            if now >= deadline { return false }
            if !options.quiet, now - lastProgress >= 1_000_000_000 {
                lastProgress = now
                let elapsed = Double(now - startedAt) / 1e9
                let cpu = ProcessResources.cpuTime()
                let cpuSeconds = Double(cpu.userMicroseconds + cpu.systemMicroseconds
                                        - cpuAtStart.userMicroseconds - cpuAtStart.systemMicroseconds) / 1e6
                let sinceMark = max(1e-3, Double(now - measurementStartedAt) / 1e9)
                let line = "[\(String(format: "%.1f", elapsed))s] \(phase): \(progress()) | driver cpu \(Int(cpuSeconds / sinceMark * 100))%"
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            usleep(50_000)
        }
    }

    /// Like `wait`, but gives up only once `measure` has stopped changing for `stallSeconds`:
    /// an overloaded server that is still making progress is waited for, a stuck one is not.
    @discardableResult
    func waitWhileProgressing(stallSeconds: Double, phase: String, progress: () -> String,
                              measure: () -> Int, until isDone: () -> Bool) -> Bool {
        var last = measure()
        var lastChange = MonotonicClock.nanoseconds()
        var isFinished = false
        wait(timeoutSeconds: 3600, phase: phase, progress: progress) {
            if isDone() {
                isFinished = true
                return true
            }
            let now = MonotonicClock.nanoseconds()
            let current = measure()
            if current != last {
                last = current
                lastChange = now
            }
            return Double(now - lastChange) / 1e9 >= stallSeconds
        }
        return isFinished
    }

    /// Sleeps for the measured phase, printing progress.
    func hold(seconds: Double, phase: String, progress: () -> String) {
        wait(timeoutSeconds: seconds, phase: phase, progress: progress) { false }
    }

    /// Sum of `count` over the workers.
    func total(_ count: (W) -> Int) -> Int {
        onEach(count).reduce(0, +)
    }

    /// Between the connect phase and the measured phase: a child of a multi-process run tells
    /// its parent it is ready and waits for the signal to go on.
    func synchronizeWithParent() {
        guard options.processCount > 1 else { return }
        coordinator.reportReadyAndWaitForGo()
    }

    /// Closes every client and waits (up to five seconds) for the closes to complete.
    func closeAll() {
        startOnEach { $0.closeAll() }
        wait(timeoutSeconds: 5, phase: "closing", progress: { "\(total { $0.liveClients }) open" }) {
            total { $0.liveClients } == 0
        }
    }

    /// The merged result of all workers, with this process's CPU time.
    func gatherResult(durationSeconds: Double) -> RunResult {
        var merged = RunResult(scenario: options.scenario.rawValue)
        for part in onEach({ $0.finalResult() }) { merged.merge(part) }
        merged.durationSeconds = durationSeconds
        let cpu = ProcessResources.cpuTime()
        merged.add(cpu.userMicroseconds - cpuAtStart.userMicroseconds, to: "cpu_user_microseconds")
        merged.add(cpu.systemMicroseconds - cpuAtStart.systemMicroseconds, to: "cpu_system_microseconds")
        // CPU is measured from the start of the measured phase to now, which includes draining:
        // percentages are of that wall time, not of `durationSeconds`.
        let wallSeconds = Double(MonotonicClock.nanoseconds() - measurementStartedAt) / 1e9
        merged.gauges["measured_wall_seconds"] = wallSeconds
        if let before = serverCPUAtStart, let pid = options.serverPID,
           let after = ProcessResources.cpuMicroseconds(of: pid), wallSeconds > 0 {
            merged.gauges["server_cpu_seconds"] = Double(after - before) / 1e6
            merged.gauges["server_cpu_percent_of_one_core"] = Double(after - before) / 1e4 / wallSeconds
        }
        if let before = serverWaitAtStart, let pid = options.serverPID,
           let after = ProcessResources.runQueueWaitMicroseconds(of: pid) {
            merged.gauges["server_cpu_wait_seconds"] = Double(max(0, after - before)) / 1e6
        }
        if let before = driverWaitAtStart, let after = ProcessResources.runQueueWaitMicroseconds(of: getpid()) {
            merged.gauges["driver_cpu_wait_seconds"] = Double(max(0, after - before)) / 1e6
        }
        for sample in onEach({ $0.failureSamples }).joined() {
            FileHandle.standardError.write(Data("loadtest: failure: \(sample)\n".utf8))
        }
        return merged
    }
}

/// Carries a loop-confined worker to its loop.
struct WorkerBox<W: Worker>: @unchecked Sendable {
    let worker: W
    init(_ worker: W) { self.worker = worker }
}
