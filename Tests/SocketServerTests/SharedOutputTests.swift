import Foundation
import Platform
import Glibc
import Testing
import TestSupport
@testable import SocketServer

extension SocketServerTests {
    @Suite struct SharedOutputTests {
        @Test func remainderOfADirectWriteStartsInsideTheChunkWhereTheWriteStopped() {
            let output = SharedOutput(chunks: [[1, 2, 3], [4, 5], [6, 7, 8, 9]])
            #expect(output.byteCount == 9)
            for written in 0..<9 {
                var queue = WriteQueue()
                queue.appendRemainder(of: output, afterWriting: written)
                #expect(queue.byteCount == 9 - written)
                let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 4)
                defer { vectors.deallocate() }
                let count = queue.fillVectors(vectors, capacity: 4, byteLimit: 100)
                var bytes: [UInt8] = []
                for index in 0..<count {
                    bytes += UnsafeRawBufferPointer(start: vectors[index].iov_base, count: vectors[index].iov_len)
                }
                #expect(bytes == Array(UInt8(written + 1)...9), "after \(written) bytes")
            }
        }

        @Test func anIdleConnectionWritesSharedOutputAtOnceInOneCall() async throws {
            let writes = Counter()
            let faulty = Syscalls(injectingFaults: { call in
                if call == .sendVectors { _ = writes.increment() }
                return nil
            })
            let chunks = (0..<6).map { pattern(count: 300 + $0, seed: $0) }
            let queuedAfterSend = Counter()
            let collector = HandlerCollector(echoes: false) { connection in
                let before = writes.count
                #expect(connection.send(SharedOutput(chunks: chunks)) == .enqueued)
                #expect(writes.count == before + 1, "written during the send, in one call")
                if connection.queuedByteCount > 0 { _ = queuedAfterSend.increment() }
            }
            let (server, port) = try startServer(collector: collector) { $0.syscalls = faulty }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            let expected = chunks.flatMap { $0 }
            #expect(await eventually(timeout: .seconds(10)) { client.receivedCount >= expected.count })
            #expect(client.received == expected)
            #expect(queuedAfterSend.count == 0, "nothing is left queued when the kernel takes it all")
        }

        @Test func sharedOutputQueuesBehindWaitingOutputAndKeepsTheOrder() async throws {
            let first = pattern(count: 500, seed: 1)
            let chunks = (0..<3).map { pattern(count: 200, seed: 10 + $0) }
            let collector = HandlerCollector(echoes: false) { connection in
                _ = connection.send(first)   // deferred to the end of the block
                #expect(connection.queuedByteCount == first.count)
                _ = connection.send(SharedOutput(chunks: chunks))
                #expect(connection.queuedByteCount == first.count + 600, "queued behind, not written ahead of it")
            }
            let (server, port) = try startServer(collector: collector)
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            let expected = first + chunks.flatMap { $0 }
            #expect(await eventually(timeout: .seconds(10)) { client.receivedCount >= expected.count })
            #expect(client.received == expected)
        }

        @Test func shortWritesAndWouldBlockOfSharedOutputLoseNoByte() async throws {
            let calls = Counter()
            let faulty = Syscalls(injectingFaults: { call in
                guard call == .sendVectors else { return nil }
                let count = calls.increment()
                return count % 4 == 0 ? .fail(.wouldBlock) : .limitBytes(1 + (count * 131) % 700)
            })
            let rounds = (0..<12).map { round in
                (0..<(1 + round % 4)).map { pattern(count: 150 + round * 17 + $0, seed: round * 10 + $0) }
            }
            let expected = rounds.flatMap { $0.flatMap { $0 } }
            let collector = HandlerCollector(echoes: false) { connection in
                for chunks in rounds { _ = connection.send(SharedOutput(chunks: chunks)) }
            }
            let (server, port) = try startServer(collector: collector) { $0.syscalls = faulty }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually(timeout: .seconds(20)) { client.receivedCount >= expected.count })
            #expect(client.received == expected)
        }

        @Test func aFailedDirectWriteClosesWithThatError() async throws {
            let faulty = Syscalls(injectingFaults: { call in call == .sendVectors ? .fail(.connectionReset) : nil })
            let results = SendLog()
            let collector = HandlerCollector(echoes: false) { connection in
                results.record([connection.send(SharedOutput(chunks: [[1, 2, 3]]))])
            }
            let (server, port) = try startServer(collector: collector) { $0.syscalls = faulty }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(results.results == [.dropped])
            #expect(collector.handlers.first?.closeReason == .ioError(.connectionReset))
        }
    }
}
