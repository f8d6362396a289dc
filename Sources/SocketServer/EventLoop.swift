// Event loops: serial Dispatch queues that own connections, their readiness (Readiness.swift),
// a shared read buffer and a coarse deadline timer.
import Dispatch
import Glibc
import Platform
import Synchronization

/// A serial queue that every connection assigned to it is confined to for life.
///
/// Confinement: `@unchecked Sendable` because the loop is shared across threads, but all of its
/// mutable state (the connection table, the read buffer, the vector scratch space, upper
/// layers' `local` objects, the serial counter) is touched only on `queue`. `execute` and
/// `schedule` are the only entry points safe from any thread.
public final class EventLoop: @unchecked Sendable {
    /// Vectors per gathered write, the Linux IOV_MAX.
    static let maxVectors = 1024

    /// The loop's serial queue; every handler callback of its connections runs here.
    public let queue: DispatchQueue
    /// Position of this loop in its group.
    public let index: Int
    /// The system calls of this loop's sockets (and the faults a test injects into them).
    let syscalls: Syscalls

    /// Read buffer shared by every connection on the loop; valid for one delivery at a time.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Scratch `iovec` array for gathered writes, shared for the same reason.
    let vectors: UnsafeMutablePointer<iovec>

    private let idStride: UInt64
    private var serial: UInt64 = 0
    private var timer: DispatchSourceTimer?
    private let queueKey = DispatchSpecificKey<Int>()
    /// Every connection of the loop, its descriptor watched by one epoll instance; see Readiness.swift.
    var readiness: ReadinessTable
    private var readinessSource: DispatchSourceRead?
    /// Batches of ready sockets handled per Dispatch wakeup before other queued work gets a turn.
    private static let maxReadinessRounds = 4
    /// Connections with output queued during the current block, written once it ends.
    private var deferredFlushes: [Connection] = []
    private var isServingReadiness = false
    /// Connections torn down and waiting for their release on a later turn, in order.
    private var pendingReleases: [(Connection, ConnectionCloseReason)] = []
    /// Upper layers' objects for this loop, by `LoopLocal` slot; see `local(_:)`.
    private var locals: [AnyObject?] = []

    /// Creates a loop. `readBufferSize` is paid once per loop; `tickMilliseconds` is the period
    /// of the deadline sweep; `syscalls` is what its sockets call (default: the real calls).
    public init(index: Int = 0, loopCount: Int = 1, readBufferSize: Int = 64 * 1024, tickMilliseconds: Int = 250,
                syscalls: Syscalls = .live) {
        precondition(readBufferSize >= 16 * 1024, "the read buffer must hold a full TLS record")
        precondition(tickMilliseconds > 0, "the tick period must be positive")
        self.index = index
        self.syscalls = syscalls
        readiness = ReadinessTable(syscalls: syscalls)
        self.idStride = UInt64(max(1, loopCount))
        queue = DispatchQueue(label: "bangbang.loop.\(index)")
        queue.setSpecific(key: queueKey, value: index)
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readBufferSize, alignment: 16)
        vectors = UnsafeMutablePointer<iovec>.allocate(capacity: EventLoop.maxVectors)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(tickMilliseconds),
                       repeating: .milliseconds(tickMilliseconds), leeway: .milliseconds(tickMilliseconds / 4))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.activate()
        self.timer = timer
        let source = DispatchSource.makeReadSource(fileDescriptor: readiness.pollDescriptor, queue: queue)
        source.setEventHandler { [weak self] in self?.handleReadiness() }
        // Dispatch may still use the descriptor until the cancel handler runs: closing it earlier
        // could let a new descriptor with the same number meet Dispatch's stale registration.
        source.setCancelHandler(handler: readiness.release)
        source.activate()
        readinessSource = source
    }

    deinit {
        timer?.cancel()
        readinessSource?.cancel()
        readBuffer.deallocate()
        vectors.deallocate()
    }

    /// Has `connection`'s output written after the block running now, together with whatever
    /// else that block queues for it: the replies to a batch of requests, or the pushes of a batch
    /// of commits, leave as one gathered write per connection instead of one per message. Call on the loop.
    func deferFlush(_ connection: Connection) {
        // While serving readiness, the round's end writes them without another queue hop.
        if deferredFlushes.isEmpty, !isServingReadiness { queue.async { [self] in flushDeferred() } }
        deferredFlushes.append(connection)
    }

    /// Has `connection` released (its descriptor closed, its handler told why) on a later turn
    /// than the one tearing it down, so it is never freed inside one of its own callbacks.
    /// Releases queued before that turn comes share its block: when thousands of peers leave at
    /// once, each costs an entry in a list instead of a block and a closure of its own. Call on
    /// the loop.
    func releaseLater(_ connection: Connection, reason: ConnectionCloseReason) {
        if pendingReleases.isEmpty { queue.async { [self] in releasePending() } }
        pendingReleases.append((connection, reason))
    }

    private func releasePending() {
        var batch: [(Connection, ConnectionCloseReason)] = []
        swap(&batch, &pendingReleases)
        // A release may tear down (and so queue the release of) another connection: that one
        // waits for the next block, which the first append to the emptied list schedules.
        for (connection, reason) in batch { connection.release(reason) }
    }

    private func flushDeferred() {
        var pending: [Connection] = []
        swap(&pending, &deferredFlushes)
        for connection in pending { connection.flushDeferred() }
        pending.removeAll(keepingCapacity: true)
        if deferredFlushes.isEmpty { swap(&pending, &deferredFlushes) }
    }

    /// Serves every ready socket: batches of `epoll_wait` until none is ready, so the handler
    /// never depends on how Dispatch re-arms the epoll descriptor. Runs on the loop.
    private func handleReadiness() {
        isServingReadiness = true
        defer { isServingReadiness = false }
        for _ in 0..<Self.maxReadinessRounds {
            let count = syscalls.pollReady(readiness.pollDescriptor, into: readiness.events,
                                           capacity: ReadinessTable.batchCapacity)
            if count == 0 { return }
            for position in 0..<count {
                let event = readiness.events[position]
                readiness.connection(for: event.data.u64)?.handleReadiness(event.events)
            }
            // What this round's input produced (echoes, refusals, handshake answers) leaves now.
            if !deferredFlushes.isEmpty { flushDeferred() }
        }
        // Still busy: let the queue's other work (replies, pushes, timers) run, then go on.
        queue.async { [self] in handleReadiness() }
    }

    /// This loop's instance of `key`'s object, made on first use and kept for the loop's life.
    /// For scratch space that every connection of the loop can share because each uses it only
    /// within one call on the loop's queue (as they share the read buffer), so that an idle
    /// connection holds none. Costs an array index per call. Call on the loop.
    public func local<Value: AnyObject>(_ key: LoopLocal<Value>) -> Value {
        assert(isCurrent, "EventLoop.local called off its loop")
        if key.slot < locals.count, let value = locals[key.slot] { return unsafeDowncast(value, to: Value.self) }
        let made = key.make()
        if key.slot >= locals.count { locals += repeatElement(nil, count: key.slot - locals.count + 1) }
        locals[key.slot] = made
        return made
    }

    /// Monotonic time in milliseconds, the unit of `Connection.deadline`.
    public static var now: Int64 { Syscalls.monotonicMilliseconds() }

    /// Monotonic time in milliseconds.
    public var now: Int64 { Syscalls.monotonicMilliseconds() }

    /// True when called on this loop's queue.
    public var isCurrent: Bool { DispatchQueue.getSpecific(key: queueKey) == index }

    /// Runs `work` on the loop. Safe from any thread.
    public func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `work` on the loop after `milliseconds`. Safe from any thread.
    public func schedule(afterMilliseconds milliseconds: Int, _ work: @escaping @Sendable () -> Void) {
        queue.asyncAfter(deadline: .now() + .milliseconds(milliseconds), execute: work)
    }

    /// Number of connections registered on this loop. Call on the loop.
    public var connectionCount: Int {
        dispatchPrecondition(condition: .onQueue(queue))
        return readiness.count
    }

    /// Calls `body` for each connection of the loop (open, opening or closing). Call on the loop.
    /// Connections closed by `body` stay registered until their descriptor is released; one
    /// that `body` adds may or may not be visited.
    public func forEachConnection(_ body: (Connection) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        // Slots are given back only when a connection is released (a later turn), so every
        // connection registered now keeps its slot while this runs. The table is read afresh
        // for each slot because `body` may register a connection.
        let end = readiness.slotCount
        var slot = 0
        while slot < end {
            if let connection = readiness.connection(inSlot: slot) { body(connection) }
            slot += 1
        }
    }

    func makeConnectionID() -> UInt64 {
        serial += 1
        return serial * idStride + UInt64(index)
    }

    func register(_ connection: Connection) {
        readiness.register(connection)
    }

    func unregister(_ connection: Connection) {
        readiness.unregister(connection)
    }

    private func tick() {
        let now = self.now
        forEachConnection { $0.checkDeadlines(now: now) }
    }

    func stopTimer() {
        timer?.cancel()
        timer = nil
    }
}

/// A fixed set of event loops with round-robin assignment.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let cursor = Mutex(0)

    /// Creates `count` loops (one per core by default).
    public init(count: Int, readBufferSize: Int = 64 * 1024, tickMilliseconds: Int = 250, syscalls: Syscalls = .live) {
        precondition(count > 0, "an event loop group needs at least one loop")
        loops = (0..<count).map {
            EventLoop(index: $0, loopCount: count, readBufferSize: readBufferSize, tickMilliseconds: tickMilliseconds,
                      syscalls: syscalls)
        }
    }

    /// The next loop in round-robin order. Safe from any thread.
    public func next() -> EventLoop {
        let index = cursor.withLock { cursor in
            defer { cursor = (cursor + 1) % loops.count }
            return cursor
        }
        return loops[index]
    }
}

/// A kind of object every event loop keeps one of for its connections, made on first use
/// (`EventLoop.local`). Make one key per kind, once (a `static let`): each key takes a slot in
/// every loop's table.
public final class LoopLocal<Value: AnyObject>: Sendable {
    let slot: Int
    let make: @Sendable () -> Value

    /// `make` runs on the loop, the first time the loop is asked for the object.
    public init(_ make: @escaping @Sendable () -> Value) {
        slot = loopLocalSlots.add(1, ordering: .relaxed).oldValue
        self.make = make
    }
}

/// The next `LoopLocal` slot.
private let loopLocalSlots = Atomic<Int>(0)
