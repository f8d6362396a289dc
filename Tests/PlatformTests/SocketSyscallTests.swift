import Glibc
import Platform
import Testing
import TestSupport

@Suite struct SocketSyscallTests {
    /// A listener on 127.0.0.1 with a kernel-chosen port, and that port.
    private func listen(_ syscalls: Syscalls) throws -> (descriptor: Int32, address: sockaddr_in) {
        let listener = try syscalls.socket(family: AF_INET)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(Errno) in
                try syscalls.bind(listener, to: raw, length: socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try syscalls.listen(listener, backlog: 8)
        var bound = try syscalls.localAddress(listener)
        return (listener, withUnsafeBytes(of: &bound) { $0.load(as: sockaddr_in.self) })
    }

    private func connect(_ syscalls: Syscalls, to address: sockaddr_in) throws -> Int32 {
        let client = try syscalls.socket(family: AF_INET)
        var address = address
        _ = try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { (raw) throws(Errno) in
                try syscalls.connect(client, to: raw, length: socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return client
    }

    @Test func theLiveLayerCarriesBytesOverALoopbackConnection() async throws {
        let syscalls = Syscalls.live
        let (listener, address) = try listen(syscalls)
        defer { syscalls.close(listener) }
        #expect(address.sin_port != 0)
        let client = try connect(syscalls, to: address)
        defer { syscalls.close(client) }

        var accepted: Int32?
        #expect(try await eventually { accepted = try syscalls.accept(listener)?.descriptor; return accepted != nil })
        guard let server = accepted else { return }
        defer { syscalls.close(server) }
        #expect(await eventually { syscalls.pendingSocketError(client) == nil })

        var message: [UInt8] = Array("hello".utf8)
        let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 1)
        defer { vectors.deallocate() }
        var written: Int?
        #expect(try await eventually {
            written = try message.withUnsafeMutableBytes { bytes in
                vectors[0] = iovec(iov_base: bytes.baseAddress, iov_len: bytes.count)
                return try syscalls.sendVectors(client, vectors, count: 1)
            }
            return written != nil
        })
        #expect(written == 5)

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        var read: Int?
        #expect(try await eventually { read = try syscalls.read(server, into: buffer); return read != nil })
        #expect(read == 5)
        #expect(Array(buffer.prefix(5)) == message)
        // Nothing more has arrived: a non-blocking read reports "not now", not an error.
        #expect(try syscalls.read(server, into: buffer) == nil)
        message = []
    }

    @Test func injectedSocketFaultsAreReportedLikeTheRealOnes() throws {
        let faulty = Syscalls(injectingFaults: { call in
            switch call {
            case .accept: .fail(.tooManyOpenFiles)
            case .connect: .fail(.connectionRefused)
            case .read: .fail(.wouldBlock)
            case .sendVectors: .fail(.brokenPipe)
            default: nil
            }
        })
        let (listener, address) = try listen(.live)
        defer { Syscalls.live.close(listener) }
        #expect(throws: Errno.tooManyOpenFiles) { try faulty.accept(listener) }
        #expect(throws: Errno.connectionRefused) { try connect(faulty, to: address) }

        let descriptor = try faulty.socket(family: AF_INET)
        defer { faulty.close(descriptor) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 1)
        defer { buffer.deallocate() }
        #expect(try faulty.read(descriptor, into: buffer) == nil)
        let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 1)
        defer { vectors.deallocate() }
        vectors[0] = iovec(iov_base: buffer.baseAddress, iov_len: buffer.count)
        #expect(throws: Errno.brokenPipe) { try faulty.sendVectors(descriptor, vectors, count: 1) }
    }
}
