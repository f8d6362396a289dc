import Foundation
import Platform
import Glibc
import Testing
import TestSupport
@testable import SocketServer

/// Results of sends made on a loop, read by the test.
final class SendLog: @unchecked Sendable {
    private let lock = NSLock()
    private var _results: [SendResult] = []

    func record(_ results: [SendResult]) {
        lock.lock()
        _results = results
        lock.unlock()
    }

    var results: [SendResult] {
        lock.lock()
        defer { lock.unlock() }
        return _results
    }
}

extension SocketServerTests {
    @Suite struct WriteTests {
        @Test func writeQueueGathersAcrossChunkBoundaries() {
            var queue = WriteQueue()
            let first: [UInt8] = [1, 2, 3]
            let second: [UInt8] = [4, 5, 6, 7]
            queue.append(first)
            queue.append(second)
            #expect(queue.byteCount == 7)
            let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 4)
            defer { vectors.deallocate() }
            #expect(queue.fillVectors(vectors, capacity: 4, byteLimit: 100) == 2)
            queue.consume(4)
            #expect(queue.byteCount == 3)
            #expect(queue.fillVectors(vectors, capacity: 4, byteLimit: 100) == 1)
            let remaining = UnsafeRawBufferPointer(start: vectors[0].iov_base, count: vectors[0].iov_len)
            #expect(Array(remaining) == [5, 6, 7])
            queue.consume(3)
            #expect(queue.isEmpty)
            #expect(queue.fillVectors(vectors, capacity: 4, byteLimit: 100) == 0)
        }

        @Test func writeQueueHoldsNothingBeyondItsFirstChunkOnceWritten() {
            var queue = WriteQueue()
            queue.append([1, 2, 3])
            #expect(!queue.hasBacklog, "one chunk is kept inline")
            queue.consume(1)
            #expect(queue.hasBacklog, "a partly written chunk remembers its offset")
            #expect(queue.byteCount == 2)
            queue.append([4, 5])
            queue.append([6])
            queue.consume(2)
            #expect(queue.byteCount == 3)
            let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 4)
            defer { vectors.deallocate() }
            #expect(queue.fillVectors(vectors, capacity: 4, byteLimit: 100) == 2)
            #expect(queue.hasBacklog, "a chunk waits behind the front one")
            queue.consume(2)
            #expect(queue.byteCount == 1)
            #expect(!queue.hasBacklog, "with one whole chunk left there is nothing else to keep")
            queue.consume(1)
            #expect(queue.isEmpty)
            #expect(!queue.hasBacklog)
        }

        @Test func writeQueueKeepsOrderAcrossPartialWritesOfManyChunks() {
            var queue = WriteQueue()
            let chunks = (0..<200).map { pattern(count: 1 + $0 % 7, seed: $0) }
            for chunk in chunks { queue.append(chunk) }
            let expected = chunks.flatMap { $0 }
            var written: [UInt8] = []
            let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 8)
            defer { vectors.deallocate() }
            var step = 1
            while !queue.isEmpty {
                let count = queue.fillVectors(vectors, capacity: 8, byteLimit: 100)
                var available: [UInt8] = []
                for index in 0..<count {
                    available += UnsafeRawBufferPointer(start: vectors[index].iov_base, count: vectors[index].iov_len)
                }
                let take = min(step, available.count)
                written += available.prefix(take)
                queue.consume(take)
                #expect(queue.byteCount == expected.count - written.count)
                step = step % 13 + 1
            }
            #expect(written == expected)
            #expect(!queue.hasBacklog)
        }

        @Test func writeQueueHonoursVectorCapacity() {
            var queue = WriteQueue()
            let shared: [UInt8] = [9, 9]
            for _ in 0..<10 { queue.append(shared) }
            let vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 4)
            defer { vectors.deallocate() }
            #expect(queue.fillVectors(vectors, capacity: 4, byteLimit: 1000) == 4)
            #expect(queue.fillVectors(vectors, capacity: 4, byteLimit: 3) == 2)
        }

        @Test func shortWritesAndWouldBlockPreserveByteOrder() async throws {
            let calls = Counter()
            let faulty = Syscalls(injectingFaults: { call in
                guard call == .sendVectors else { return nil }
                let count = calls.increment()
                return count % 3 == 0 ? .fail(.wouldBlock) : .limitBytes(1 + count % 997)
            })
            let pieces = (0..<40).map { pattern(count: 1000 + $0 * 37, seed: $0) }
            let expected = pieces.flatMap { $0 }
            let collector = HandlerCollector(echoes: false) { connection in
                for piece in pieces { _ = connection.send(piece) }
            }
            let (server, port) = try startServer(collector: collector) { $0.syscalls = faulty }
            defer { server.stop() }
            let loop = EventLoop()
            let client = RecordingHandler()
            try SocketClient.connect(host: "127.0.0.1", port: port, loop: loop, handler: client)
            #expect(await eventually(timeout: .seconds(20)) { client.receivedCount >= expected.count })
            #expect(client.received == expected)
            #expect(calls.count > 40)
        }

        @Test func injectedWriteErrorClosesWithThatError() async throws {
            let faulty = Syscalls(injectingFaults: { call in call == .sendVectors ? .fail(.noSpace) : nil })
            let collector = HandlerCollector(echoes: false) { _ = $0.send([1, 2, 3]) }
            let (server, port) = try startServer(collector: collector) { $0.syscalls = faulty }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            defer { raw.close() }
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .ioError(.noSpace))
        }

        @Test func backpressureIsReportedAndDrainFollowsOnceThePeerReads() async throws {
            let log = SendLog()
            let chunk = pattern(count: 32 * 1024)
            let collector = HandlerCollector(echoes: false) { connection in
                var results: [SendResult] = []
                for _ in 0..<4000 {
                    let result = connection.send(chunk)
                    results.append(result)
                    if result != .enqueued { break }
                }
                log.record(results)
            }
            let (server, port) = try startServer(collector: collector) {
                $0.connection.highWaterMark = 64 * 1024
                $0.connection.lowWaterMark = 16 * 1024
                $0.connection.outputLimit = 512 * 1024 * 1024
            }
            defer { server.stop() }
            let raw = try RawSocket(port: port, receiveBuffer: 4096)
            defer { raw.close() }
            #expect(await eventually { log.results.last == .backpressure })
            let handler = try #require(collector.handlers.first)
            #expect(handler.drainCount == 0)
            let total = log.results.count * chunk.count
            let reader = Task.detached {
                var buffer = [UInt8](repeating: 0, count: 65536)
                var read = 0
                while read < total {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(raw.descriptor, $0.baseAddress, $0.count) }
                    if count <= 0 { break }
                    read += count
                }
                return read
            }
            #expect(await eventually(timeout: .seconds(10)) { handler.drainCount == 1 })
            #expect(await reader.value == total)
            #expect(handler.closeReason == nil)
        }

        @Test func peerThatNeverReadsTripsTheOutputLimit() async throws {
            let log = SendLog()
            let chunk = pattern(count: 32 * 1024)
            let collector = HandlerCollector(echoes: false) { connection in
                var results: [SendResult] = []
                for _ in 0..<4000 {
                    let result = connection.send(chunk)
                    results.append(result)
                    if result == .dropped { break }
                }
                log.record(results)
            }
            let (server, port) = try startServer(collector: collector) {
                $0.connection.highWaterMark = 64 * 1024
                $0.connection.outputLimit = 1024 * 1024
            }
            defer { server.stop() }
            let raw = try RawSocket(port: port, receiveBuffer: 4096)
            defer { raw.close() }
            #expect(await eventually { log.results.last == .dropped })
            let results = log.results
            let firstBackpressure = try #require(results.firstIndex(of: .backpressure))
            #expect(firstBackpressure < results.count - 1)
            #expect(results[firstBackpressure..<(results.count - 1)].allSatisfy { $0 == .backpressure })
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .outputLimitExceeded)
            #expect(await eventually { server.connectionCount == 0 })
        }

        @Test func singleSendLargerThanTheOutputLimitReachesAPeerThatReads() async throws {
            let payload = pattern(count: 3 * 1024 * 1024, seed: 9)
            let log = SendLog()
            let collector = HandlerCollector(echoes: false) { connection in
                log.record([connection.send(payload)])
                connection.close(flushFirst: true)
            }
            let (server, port) = try startServer(collector: collector) { $0.connection.outputLimit = 1024 * 1024 }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            let (bytes, sawEnd) = raw.readToEnd()
            raw.close()
            #expect(log.results.first != .dropped)
            #expect(sawEnd)
            #expect(bytes == payload)
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .localClose)
        }

        @Test func sendBehindABacklogPastTheLimitIsDropped() async throws {
            let log = SendLog()
            let collector = HandlerCollector(echoes: false) { connection in
                // More than the kernel buffers take, so most of it stays queued.
                let first = connection.send([UInt8](repeating: 7, count: 16 * 1024 * 1024))
                log.record([first, connection.send([1])])
            }
            let (server, port) = try startServer(collector: collector) { $0.connection.outputLimit = 1024 * 1024 }
            defer { server.stop() }
            let raw = try RawSocket(port: port, receiveBuffer: 4096)
            defer { raw.close() }
            #expect(await eventually { log.results.count == 2 })
            #expect(log.results == [.backpressure, .dropped])
            #expect(await eventually { collector.handlers.first?.closeReason == .outputLimitExceeded })
        }

        @Test func gracefulCloseFlushesQueuedBytesThenEndsTheStream() async throws {
            let payload = pattern(count: 2 * 1024 * 1024, seed: 5)
            let collector = HandlerCollector(echoes: false) { connection in
                var offset = 0
                while offset < payload.count {
                    _ = connection.send(Array(payload[offset..<min(offset + 65536, payload.count)]))
                    offset += 65536
                }
                connection.close(flushFirst: true)
            }
            let (server, port) = try startServer(collector: collector) { $0.connection.outputLimit = 8 * 1024 * 1024 }
            defer { server.stop() }
            let raw = try RawSocket(port: port)
            let (bytes, sawEnd) = raw.readToEnd()
            raw.close()
            #expect(sawEnd)
            #expect(bytes.count == payload.count)
            #expect(bytes == payload)
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .localClose)
        }

        @Test func gracefulCloseGivesUpAfterTheLingerTime() async throws {
            let collector = HandlerCollector(echoes: false) { connection in
                for _ in 0..<64 { _ = connection.send(pattern(count: 64 * 1024)) }
                connection.close(flushFirst: true)
            }
            let (server, port) = try startServer(collector: collector) {
                $0.connection.lingerMilliseconds = 300
                $0.connection.outputLimit = 16 * 1024 * 1024
                $0.tickMilliseconds = 50
            }
            defer { server.stop() }
            let raw = try RawSocket(port: port, receiveBuffer: 4096)
            defer { raw.close() }
            #expect(await eventually { collector.handlers.first?.closeReason != nil })
            #expect(collector.handlers.first?.closeReason == .lingerExpired)
        }
    }
}
