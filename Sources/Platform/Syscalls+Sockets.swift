// Socket calls: what the transport needs to listen, accept, connect and move bytes on
// non-blocking TCP sockets. Addresses cross as raw `sockaddr` pointers; the transport keeps its
// own address type.
import Glibc

extension Syscalls {
    /// A non-blocking, close-on-exec stream socket.
    public func socket(family: Int32) throws(Errno) -> Int32 {
        let kind = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let descriptor = Glibc.socket(family, kind, 0)
        if descriptor < 0 { throw Errno.current }
        return descriptor
    }

    public func setOption(_ descriptor: Int32, level: Int32, name: Int32, value: Int32) throws(Errno) {
        var value = value
        if setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) != 0 {
            throw Errno.current
        }
    }

    public func bind(_ descriptor: Int32, to address: UnsafePointer<sockaddr>, length: socklen_t) throws(Errno) {
        if Glibc.bind(descriptor, address, length) != 0 { throw Errno.current }
    }

    public func listen(_ descriptor: Int32, backlog: Int32) throws(Errno) {
        if Glibc.listen(descriptor, backlog) != 0 { throw Errno.current }
    }

    /// Starts a non-blocking connect: true when already connected, false while in progress
    /// (`EINPROGRESS`; writability then reports the outcome).
    public func connect(_ descriptor: Int32, to address: UnsafePointer<sockaddr>, length: socklen_t) throws(Errno) -> Bool {
        try failIfInjected(.connect)
        while true {
            if Glibc.connect(descriptor, address, length) == 0 { return true }
            let error = Errno.current
            if error == .interrupted { continue }
            if error == .inProgress { return false }
            throw error
        }
    }

    /// Accepts one connection as non-blocking and close-on-exec, with the peer's address; nil
    /// when the backlog is empty.
    public func accept(_ descriptor: Int32) throws(Errno) -> (descriptor: Int32, peer: sockaddr_storage)? {
        if case .fail(let injected)? = injectedFault(.accept) {
            if injected == .wouldBlock { return nil }
            throw injected
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let accepted: Int
        do {
            // Glibc's module map hides accept4 (it needs _GNU_SOURCE), hence accept plus fcntl.
            accepted = try retryingInterrupts {
                withUnsafeMutablePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                        Int(Glibc.accept(descriptor, address, &length))
                    }
                }
            }
        } catch {
            if error == .wouldBlock { return nil }
            throw error
        }
        let connection = Int32(accepted)
        _ = fcntl(connection, F_SETFL, fcntl(connection, F_GETFL) | O_NONBLOCK)
        _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
        return (connection, storage)
    }

    /// Reads into `buffer`; 0 means end of stream, nil means no data right now.
    public func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int? {
        var capacity = buffer.count
        switch injectedFault(.read) {
        case .fail(let injected)?:
            if injected == .wouldBlock { return nil }
            throw injected
        case .limitBytes(let limit)?:
            capacity = min(capacity, max(1, limit))
        case nil:
            break
        }
        do {
            return try retryingInterrupts { Glibc.read(descriptor, buffer.baseAddress, capacity) }
        } catch {
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    /// Writes the gathered vectors to a socket; nil means its send buffer is full. Through
    /// `sendmsg`, which goes straight to the socket layer (`writev` first crosses the file
    /// layer's position lock and checks, a measurable part of a small write's cost), and
    /// with `MSG_NOSIGNAL`, so a peer gone away is an error, not a signal.
    public func sendVectors(_ descriptor: Int32, _ vectors: UnsafeMutablePointer<iovec>, count: Int) throws(Errno) -> Int? {
        var vectorCount = count
        var savedLength: Int?
        switch injectedFault(.sendVectors) {
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
        do {
            var message = msghdr()
            message.msg_iov = vectors
            message.msg_iovlen = vectorCount
            return try retryingInterrupts { Glibc.sendmsg(descriptor, &message, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
        } catch {
            if error == .wouldBlock { return nil }
            throw error
        }
    }

    public func shutdownOutput(_ descriptor: Int32) {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_WR))
    }

    /// The error a non-blocking connect ended with (`SO_ERROR`), nil when it succeeded.
    public func pendingSocketError(_ descriptor: Int32) -> Errno? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &value, &length) != 0 { return Errno.current }
        return value == 0 ? nil : Errno(value)
    }

    /// The address a socket is bound to (the port the kernel picked for port 0).
    public func localAddress(_ descriptor: Int32) throws(Errno) -> sockaddr_storage {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        if rc != 0 { throw Errno.current }
        return storage
    }
}
