// Connection: one TCP (optionally TLS) stream, confined to one event loop.
//
// Theory of operation
// -------------------
// A connection belongs to exactly one EventLoop for life and all of its state is touched only
// on that loop's serial queue, so it needs no locks. Its descriptor is non-blocking.
//
// Readiness. The connection's descriptor sits in its loop's epoll instance (Readiness.swift),
// watched for input from the start and for writability only while output is blocked; the loop
// calls `handleReadiness` for it.
//
// Reading. When the socket is readable the connection reads into the loop's shared 64 KiB
// buffer (connections own no read buffer, which keeps an idle connection small), hands the
// bytes to the ConnectionHandler (after TLS decryption, which reuses the same buffer once the
// ciphertext is inside OpenSSL), and stops after `maxBytesReadPerEvent` so one busy peer cannot
// starve the others; the socket stays ready (level-triggered), so the loop comes back to it on
// its next round.
//
// Writing. `send` appends the caller's array to the WriteQueue without copying; the loop writes
// it with one gathered write (`sendmsg`) when the current block ends (`EventLoop.deferFlush`), together with
// everything else that block queued for the connection (a backlog past the high-water mark is
// written at once). Only when the kernel answers EAGAIN (or the per-event write cap is hit) is
// write interest added to the epoll registration; it is dropped again as soon as the queue is
// empty, so idle connections cost no write-readiness wakeups. Queue size drives backpressure:
// above the high-water mark `send` says `.backpressure`, and `connectionDidDrain` follows once
// the queue falls to the low-water mark; a send made while the backlog is already past the hard
// limit closes the connection with `.outputLimitExceeded`.
//
// Closing. `close(flushFirst: true)` stops delivering input, lets the queue drain (adding a TLS
// close_notify), shuts down the write side and waits for the peer's end of stream, all bounded
// by the linger time; `close(flushFirst: false)` tears down at once. Teardown removes the
// descriptor from the loop's epoll instance at once (no event reaches the connection after
// that) and closes it on a later queue turn, where the handler gets `connectionDidClose`, so a
// connection is never freed inside one of its own callbacks; releases waiting for that turn
// share one block (`EventLoop.releaseLater`).
//
// PROXY protocol. On a listener configured for it, a connection first reads the proxy's header
// (Forwarding's ProxyHeaderParser) from the raw bytes, before any TLS record, and only then
// starts TLS or tells the handler it is open; bytes after the header go on to TLS or the
// handler. A peer that is not a trusted proxy, a bad header, the end of the stream inside it
// or no header in time closes the connection at once with `.proxyHeaderRefused`, without a byte
// sent back: before the header we cannot know whether the client would understand HTTP or TLS.
//
// Deadlines. The loop's coarse timer calls `checkDeadlines` on every connection; the upper
// layer's `deadline` and the transport's own (PROXY header, TLS handshake, linger) are plain
// millisecond values on the monotonic clock. The upper layer's can fire only while connecting,
// handshaking or open, and the linger time runs only once a close is under way, so the two
// share one field; the opening deadlines (PROXY header, TLS handshake) are kept with the state
// only those connections have.
//
// Memory. Thousands of connections sit idle, so an idle one holds only what differs between
// connections: what all connections of a listener share (the options, the release callback)
// is one `ConnectionContext` they point to, the write queue holds no storage while empty
// (WriteQueue.swift), the loop's table finds a connection by its slot (Readiness.swift), the
// peer's address is kept in 19 bytes, the deadlines in one integer with a sentinel, the flags
// in bits of one byte, what only TLS or a PROXY-protocol listener needs in one box, and why a
// connection closed travels with the release it schedules instead of in a field. The fields
// are declared so that they pack.
import Dispatch
import CLinux
import Forwarding
import Glibc
import Platform

/// A TCP connection, accepted by a `TCPServer` or made by `SocketClient`.
///
/// Confinement: `@unchecked Sendable` so it can be handed to other loops (for example to hop
/// onto its own loop with `connection.loop.execute`), but every property and method except
/// `loop`, `id` and `remoteAddress` must be used on `loop.queue` only.
public final class Connection: @unchecked Sendable {
    enum State: UInt8 {
        case connecting
        /// Reading the PROXY protocol header, before TLS or the handler sees a byte.
        case awaitingProxyHeader
        case handshaking
        case open
        /// Graceful close requested; waiting for the queue to drain.
        case flushing
        /// Output shut down; waiting for the peer's end of stream.
        case halfClosed
        case closed
    }

    /// The loop this connection is confined to.
    public let loop: EventLoop
    /// Unique within the process while the loop group lives.
    public let id: UInt64
    private let peer: PeerAddress
    /// Whether the connection is TLS (its handshake may still be under way).
    public let usesTLS: Bool
    var state: State
    private var flags: Flags = []
    let descriptor: Int32
    /// The connection's slot in its loop's table while registered, or -1 (Readiness.swift).
    var slot: Int32 = -1
    /// What the connection's events go to: set when it is made, dropped when its close is
    /// reported. Upper layers find their own object for a connection here. Loop-confined.
    public internal(set) var handler: ConnectionHandler?

    /// Shared with every connection of the same listener (or client setup).
    let context: ConnectionContext
    var output = WriteQueue()
    /// Only on TLS connections and PROXY protocol listeners.
    var layers: Layers?
    /// The upper layer's `deadline` until a close is under way, then the linger deadline; or
    /// `noDeadline` (an optional would take twice the space).
    private var deadlineMilliseconds = Connection.noDeadline

    static let noDeadline = Int64.max

    init(descriptor: Int32, remoteAddress: SocketAddress, loop: EventLoop, context: ConnectionContext,
         tls: TLSSession?, handler: ConnectionHandler?, state: State) {
        self.descriptor = descriptor
        self.peer = PeerAddress(remoteAddress)
        self.loop = loop
        self.id = loop.makeConnectionID()
        self.context = context
        self.usesTLS = tls != nil
        self.handler = handler
        self.state = state
        if let tls { layers = Layers(tls: tls) }
    }

    var options: ConnectionOptions { context.options }

    enum ProxyHeaderState {
        case reading(ProxyHeaderParser)
        case read(ProxyHeader)
    }

    /// What only some connections need: the TLS session, the PROXY header being read or read,
    /// and the deadline of either. Boxed, so a plain connection pays one word for them.
    final class Layers {
        var tls: TLSSession?
        var proxyHeaderState: ProxyHeaderState?
        /// When the PROXY header or the TLS handshake must be complete, or `noDeadline`.
        var openingDeadline = Connection.noDeadline

        init(tls: TLSSession?) { self.tls = tls }
    }

    var tls: TLSSession? {
        get { layers?.tls }
        set { layers?.tls = newValue }
    }

    var proxyHeaderState: ProxyHeaderState? {
        get { layers?.proxyHeaderState }
        set {
            if layers == nil { layers = Layers(tls: nil) }
            layers?.proxyHeaderState = newValue
        }
    }

    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let isPolled = Flags(rawValue: 1 << 0)
        static let isReading = Flags(rawValue: 1 << 1)
        static let isWaitingForWritable = Flags(rawValue: 1 << 2)
        static let isCorked = Flags(rawValue: 1 << 3)
        static let isFlushDeferred = Flags(rawValue: 1 << 4)
        static let isAboveHighWater = Flags(rawValue: 1 << 5)
        static let isCloseRequested = Flags(rawValue: 1 << 6)

        mutating func set(_ flag: Flags, to isOn: Bool) {
            if isOn { insert(flag) } else { remove(flag) }
        }
    }

    /// The descriptor is in the loop's epoll set.
    private var isPolled: Bool {
        get { flags.contains(.isPolled) }
        set { flags.set(.isPolled, to: newValue) }
    }

    var isReading: Bool {
        get { flags.contains(.isReading) }
        set { flags.set(.isReading, to: newValue) }
    }

    /// Output is blocked: the loop also watches for writability.
    var isWaitingForWritable: Bool {
        get { flags.contains(.isWaitingForWritable) }
        set { flags.set(.isWaitingForWritable, to: newValue) }
    }

    /// Set by `cork()`: sends queue without writing until `uncork()`.
    var isCorked: Bool {
        get { flags.contains(.isCorked) }
        set { flags.set(.isCorked, to: newValue) }
    }

    /// Output waits for the end of the current block (`EventLoop.deferFlush`).
    var isFlushDeferred: Bool {
        get { flags.contains(.isFlushDeferred) }
        set { flags.set(.isFlushDeferred, to: newValue) }
    }

    var isAboveHighWater: Bool {
        get { flags.contains(.isAboveHighWater) }
        set { flags.set(.isAboveHighWater, to: newValue) }
    }

    var isCloseRequested: Bool {
        get { flags.contains(.isCloseRequested) }
        set { flags.set(.isCloseRequested, to: newValue) }
    }

    // MARK: Public API (loop-confined)

    /// The peer's address (without an IPv6 flow label or scope, which are not kept).
    public var remoteAddress: SocketAddress { peer.socketAddress }

    /// Monotonic time in ms (`EventLoop.now`) at which `connectionDeadlineReached` fires, or nil.
    /// Checked every loop tick, so it fires up to one tick late. It also fires while a client is
    /// still connecting or in its TLS handshake (a connect timeout), but not once a close has
    /// been requested: from then on it reads nil and setting it does nothing. Loop-confined.
    public var deadline: Int64? {
        get {
            guard !isClosing, deadlineMilliseconds != Self.noDeadline else { return nil }
            return deadlineMilliseconds
        }
        set {
            guard !isClosing else { return }
            deadlineMilliseconds = newValue ?? Self.noDeadline
        }
    }

    /// A close is under way or done: the shared deadline field is the linger time's.
    private var isClosing: Bool { state == .flushing || state == .halfClosed || state == .closed }

    /// True until teardown starts.
    public var isActive: Bool { state != .closed }

    /// True once the connection can carry application bytes and until a close is requested.
    public var isOpen: Bool { state == .open }

    /// What the PROXY protocol header said, on a listener that reads one; set before
    /// `connectionDidOpen`. Loop-confined.
    public var proxyHeader: ProxyHeader? {
        if case .read(let header)? = proxyHeaderState { return header }
        return nil
    }

    /// Bytes queued and not yet accepted by the kernel.
    public var queuedByteCount: Int { output.byteCount }

    /// Queues `bytes` for the peer; they are written when the current block on the loop ends.
    /// The array is kept, not copied (except through TLS encryption). Call on the loop.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> SendResult {
        assert(loop.isCurrent, "Connection.send called off its loop")
        guard state == .open else { return .dropped }
        if bytes.isEmpty { return isAboveHighWater ? .backpressure : .enqueued }
        if let tls {
            guard tls.send(plaintext: bytes) else {
                tearDown(.tlsFailure(TLSFailure(kind: .record, message: "encryption failed: \(TLSContext.drainErrors())")))
                return .dropped
            }
            guard let ciphertext = tls.takeCiphertext() else { return .enqueued }
            return enqueue(ciphertext)
        }
        return enqueue(bytes)
    }

    /// Sends bytes shared with other connections of this loop (a broadcast). With nothing queued
    /// (and no TLS, no cork, no blocked output) they are written at once, straight from the
    /// shared vectors, and only what the kernel did not take is queued; otherwise they queue
    /// behind the waiting output like `send`. Call on the loop.
    @discardableResult
    public func send(_ shared: SharedOutput) -> SendResult {
        assert(loop.isCurrent, "Connection.send called off its loop")
        guard state == .open else { return .dropped }
        guard tls == nil, output.isEmpty, !isCorked, !isWaitingForWritable else {
            var result = SendResult.enqueued
            for chunk in shared.chunks {
                result = send(chunk)
                if result == .dropped { break }
            }
            return result
        }
        var written = 0
        var vector = 0
        while vector < shared.vectorCount {
            let count = min(shared.vectorCount - vector, EventLoop.maxVectors)
            let accepted: Int?
            do {
                accepted = try loop.syscalls.sendVectors(descriptor, shared.vectors + vector, count: count)
            } catch {
                tearDown(.ioError(error))
                return .dropped
            }
            guard let accepted else { break }
            written += accepted
            // A short write: the socket is full. Otherwise on to the next slice, if any.
            let sliceBytes = count == shared.vectorCount
                ? shared.byteCount : (vector..<vector + count).reduce(0) { $0 + shared.vectors[$1].iov_len }
            if accepted < sliceBytes { break }
            vector += count
        }
        guard written < shared.byteCount else { return isAboveHighWater ? .backpressure : .enqueued }
        output.appendRemainder(of: shared, afterWriting: written)
        waitForWritable()
        if output.byteCount > options.highWaterMark {
            isAboveHighWater = true
            return .backpressure
        }
        return .enqueued
    }

    /// While corked, `send` only queues: nothing is written until `uncork()`, which writes
    /// everything queued with as few gathered writes as the kernel allows. A fan-out that sends
    /// several messages to one connection in one loop turn corks it so they leave together.
    /// Call on the loop.
    public func cork() {
        assert(loop.isCurrent, "Connection.cork called off its loop")
        isCorked = true
    }

    /// Ends `cork()` and writes what was queued meanwhile. Call on the loop.
    public func uncork() {
        assert(loop.isCurrent, "Connection.uncork called off its loop")
        guard isCorked else { return }
        isCorked = false
        writeQueuedOutput(isWritableEvent: false)
    }

    /// Writes what is queued now instead of when the current block ends: for a client that
    /// timestamps each request as it sends it. Call on the loop.
    public func flushNow() {
        assert(loop.isCurrent, "Connection.flushNow called off its loop")
        writeQueuedOutput(isWritableEvent: false)
    }

    /// Closes the connection. With `flushFirst`, queued bytes are sent first (bounded by the
    /// linger time) and the peer sees an orderly end of stream; otherwise the socket is closed
    /// at once. `connectionDidClose` follows on a later turn. Call on the loop.
    public func close(flushFirst: Bool = true) {
        assert(loop.isCurrent, "Connection.close called off its loop")
        switch state {
        case .closed:
            return
        case .flushing, .halfClosed:
            if !flushFirst { tearDown(.localClose) }
            return
        case .connecting, .awaitingProxyHeader, .handshaking:
            tearDown(.localClose)
            return
        case .open:
            break
        }
        isCloseRequested = true
        guard flushFirst else {
            tearDown(.localClose)
            return
        }
        if let tls {
            tls.shutdown()
            if let alert = tls.takeCiphertext() { appendOutput(alert) }
        }
        state = .flushing
        deadlineMilliseconds = loop.now + options.lingerMilliseconds
        if output.isEmpty {
            shutDownOutput()
        } else if !isWaitingForWritable {
            flush(isWritableEvent: false)
        }
    }

    // MARK: Readiness

    /// Called by the loop with the epoll events reported for this connection. Runs on the loop.
    func handleReadiness(_ events: UInt32) {
        let failed = events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0
        if isWaitingForWritable, failed || events & EPOLLOUT.rawValue != 0 { writable() }
        if isReading, state != .closed, failed || events & EPOLLIN.rawValue != 0 { readable() }
    }

    /// Tells the loop's epoll instance what this connection waits for now.
    func updateReadiness() {
        guard state != .closed else { return }
        let events = (isReading ? EPOLLIN.rawValue : 0) | (isWaitingForWritable ? EPOLLOUT.rawValue : 0)
        do throws(Errno) {
            if isPolled {
                try loop.readiness.change(self, events: events)
            } else {
                try loop.readiness.add(self, events: events)
                isPolled = true
            }
        } catch {
            tearDown(state == .connecting ? .connectFailed(error) : .ioError(error))
        }
    }

    // MARK: Deadlines

    func checkDeadlines(now: Int64) {
        switch state {
        case .awaitingProxyHeader, .handshaking:
            if let layers, now >= layers.openingDeadline {
                layers.openingDeadline = Self.noDeadline
                tearDown(state == .awaitingProxyHeader
                    ? .proxyHeaderRefused(.timedOut)
                    : .tlsFailure(TLSFailure(kind: .timeout, message: "handshake timed out")))
            }
        case .flushing, .halfClosed:
            if now >= deadlineMilliseconds {
                deadlineMilliseconds = Self.noDeadline
                tearDown(state == .flushing ? .lingerExpired : .localClose)
            }
        case .connecting, .open, .closed:
            break
        }
        let isDeadlineLive = state == .open || state == .connecting || state == .handshaking
        if isDeadlineLive, now >= deadlineMilliseconds {
            deadlineMilliseconds = Self.noDeadline
            handler?.connectionDeadlineReached(self)
        }
    }

    // MARK: Teardown

    /// Stops every event for the connection now; the descriptor is closed and the handler told
    /// on a later turn.
    func tearDown(_ reason: ConnectionCloseReason) {
        guard state != .closed else { return }
        state = .closed
        output.removeAll()
        layers?.openingDeadline = Self.noDeadline
        deadlineMilliseconds = Self.noDeadline
        isReading = false
        isWaitingForWritable = false
        if isPolled {
            loop.readiness.remove(self)
            isPolled = false
        }
        loop.releaseLater(self, reason: reason)
    }

    /// The loop's batch of releases (`EventLoop.releaseLater`) calls this on a later turn.
    func release(_ reason: ConnectionCloseReason) {
        loop.syscalls.close(descriptor)
        tls = nil
        loop.unregister(self)
        context.onRelease?()
        let handler = self.handler
        self.handler = nil
        handler?.connectionDidClose(self, reason: reason)
    }
}
