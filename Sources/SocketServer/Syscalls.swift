// Every libc call of the transport lives in this file.
//
// Each wrapper retries on EINTR, turns a -1 return into a typed `Errno`, and consults the
// fault injector first so tests can force `EAGAIN`, `ENOSPC`, `EMFILE` or short writes on
// exactly the calls they care about without a misbehaving kernel.
import CLinux
import Glibc
import Foundation
import Synchronization

/// A C `errno` value as a type, so failures are matched by name rather than by integer.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let inProgress = Errno(EINPROGRESS)
    public static let tooManyOpenFiles = Errno(EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(ENFILE)
    public static let noSpace = Errno(ENOSPC)
    public static let brokenPipe = Errno(EPIPE)
    public static let connectionReset = Errno(ECONNRESET)
    public static let connectionRefused = Errno(ECONNREFUSED)
    public static let connectionAborted = Errno(ECONNABORTED)
    public static let timedOut = Errno(ETIMEDOUT)

    public var description: String {
        "\(String(cString: strerror(rawValue))) (errno \(rawValue))"
    }
}

/// The calls a test can make fail.
public enum SyscallName: Sendable, Hashable {
    case accept, read, writev, connect
}

/// What an injected fault does to one call.
public enum InjectedFault: Sendable, Equatable {
    /// The call fails with this errno without reaching the kernel.
    case fail(Errno)
    /// `writev`/`read` transfers at most this many bytes (a short write or short read).
    case limitBytes(Int)
}

/// Test hook: decides, per call and descriptor, whether to inject a fault.
///
/// One injector belongs to the servers and loops it is handed to (`SocketServerConfiguration.faults`,
/// `EventLoop(faults:)`), so a test that breaks its own server's sockets never touches the
/// sockets of another server or client in the same process. Consulted only in debug builds
/// (where the tests run): release builds compile the check out.
public final class FaultInjector: Sendable {
    public typealias Rule = @Sendable (SyscallName, Int32) -> InjectedFault?

    private let rule = Mutex<Rule?>(nil)

    public init() {}

    /// Installs `newRule` (or removes the current one with nil) for every socket of this injector.
    public func install(_ newRule: Rule?) {
        rule.withLock { $0 = newRule }
    }

    @inline(__always)
    func fault(for call: SyscallName, descriptor: Int32) -> InjectedFault? {
        #if DEBUG
        return rule.withLock { $0 }?(call, descriptor)
        #else
        return nil
        #endif
    }
}

/// Thin, EINTR-safe wrappers over the socket calls the transport makes.
enum Syscalls {
    @inline(__always)
    private static func retrying(_ body: () -> Int) -> Result<Int, Errno> {
        while true {
            let result = body()
            if result >= 0 { return .success(result) }
            let code = errno
            if code == EINTR { continue }
            return .failure(Errno(code))
        }
    }

    static func socket(family: Int32) throws(Errno) -> Int32 {
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = Glibc.socket(family, kind, 0)
        if fd < 0 { throw Errno(errno) }
        return fd
    }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) throws(Errno) {
        var value = value
        if setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            throw Errno(errno)
        }
    }

    static func bind(_ fd: Int32, to address: SocketAddress) throws(Errno) {
        let rc = address.withSockaddr { pointer, length in Glibc.bind(fd, pointer, length) }
        if rc != 0 { throw Errno(errno) }
    }

    static func listen(_ fd: Int32, backlog: Int32) throws(Errno) {
        if Glibc.listen(fd, backlog) != 0 { throw Errno(errno) }
    }

    /// Starts a non-blocking connect; `EINPROGRESS` is reported as `false` (not yet connected).
    static func connect(_ fd: Int32, to address: SocketAddress, faults: FaultInjector?) throws(Errno) -> Bool {
        if case .fail(let injected)? = faults?.fault(for: .connect, descriptor: fd) { throw injected }
        while true {
            let rc = address.withSockaddr { pointer, length in Glibc.connect(fd, pointer, length) }
            if rc == 0 { return true }
            let code = errno
            if code == EINTR { continue }
            if code == EINPROGRESS { return false }
            throw Errno(code)
        }
    }

    /// Accepts one connection as non-blocking; nil when the backlog is empty.
    static func accept(_ fd: Int32, faults: FaultInjector?) throws(Errno) -> (Int32, SocketAddress)? {
        if case .fail(let injected)? = faults?.fault(for: .accept, descriptor: fd) {
            if injected == .wouldBlock { return nil }
            throw injected
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        // Glibc's module map hides accept4 (it needs _GNU_SOURCE), hence accept plus fcntl.
        let result = retrying {
            withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                    Int(Glibc.accept(fd, address, &length))
                }
            }
        }
        switch result {
        case .success(let accepted):
            let descriptor = Int32(accepted)
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            return (descriptor, SocketAddress(storage: storage))
        case .failure(let error):
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// Reads into `buffer`; 0 means end of stream, nil means no data right now.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, faults: FaultInjector?) throws(Errno) -> Int? {
        var capacity = buffer.count
        switch faults?.fault(for: .read, descriptor: fd) {
        case .fail(let injected)?:
            if injected == .wouldBlock { return nil }
            throw injected
        case .limitBytes(let limit)?:
            capacity = min(capacity, max(1, limit))
        case nil:
            break
        }
        switch retrying({ Glibc.read(fd, buffer.baseAddress, capacity) }) {
        case .success(let count): return count
        case .failure(let error):
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// Writes the gathered vectors; nil means the socket buffer is full.
    static func writev(_ fd: Int32, _ vectors: UnsafeMutablePointer<iovec>, count: Int, faults: FaultInjector?) throws(Errno) -> Int? {
        var vectorCount = count
        var savedLength: Int?
        switch faults?.fault(for: .writev, descriptor: fd) {
        case .fail(let injected)?:
            if injected == .wouldBlock { return nil }
            throw injected
        case .limitBytes(let limit)?:
            // Trim to the first vector and shorten it: the kernel then performs a short write.
            vectorCount = 1
            savedLength = vectors[0].iov_len
            vectors[0].iov_len = min(vectors[0].iov_len, max(1, limit))
        case nil:
            break
        }
        defer { if let savedLength { vectors[0].iov_len = savedLength } }
        switch retrying({ Glibc.writev(fd, vectors, Int32(vectorCount)) }) {
        case .success(let count): return count
        case .failure(let error):
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    static func shutdownOutput(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    static func close(_ fd: Int32) {
        // Linux releases the descriptor even when close reports EINTR, so never retry it.
        _ = Glibc.close(fd)
    }

    // MARK: Readiness (epoll)

    static func pollCreate() throws(Errno) -> Int32 {
        let fd = epoll_create1(Int32(EPOLL_CLOEXEC))
        if fd < 0 { throw Errno(errno) }
        return fd
    }

    /// Adds (`EPOLL_CTL_ADD`) or changes (`EPOLL_CTL_MOD`) `fd`'s interest set; `token` comes back
    /// with its events.
    static func pollControl(_ poll: Int32, _ operation: Int32, _ fd: Int32, events: UInt32, token: UInt64) throws(Errno) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        if epoll_ctl(poll, operation, fd, &event) != 0 { throw Errno(errno) }
    }

    static func pollRemove(_ poll: Int32, _ fd: Int32) {
        var unused = epoll_event()
        _ = epoll_ctl(poll, Int32(EPOLL_CTL_DEL), fd, &unused)
    }

    /// Ready descriptors now, without waiting; 0 when none (or on EINTR, which the next turn retries).
    static func pollReady(_ poll: Int32, into events: UnsafeMutablePointer<epoll_event>, capacity: Int32) -> Int {
        max(0, Int(epoll_wait(poll, events, capacity, 0)))
    }

    static func pendingSocketError(_ fd: Int32) -> Errno? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) != 0 { return Errno(errno) }
        return value == 0 ? nil : Errno(value)
    }

    static func localAddress(_ fd: Int32) throws(Errno) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        if rc != 0 { throw Errno(errno) }
        return SocketAddress(storage: storage)
    }

    static func monotonicMilliseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000
    }
}
