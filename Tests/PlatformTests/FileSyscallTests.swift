import Foundation
import Glibc
import Platform
import Synchronization
import Testing

@Suite struct FileSyscallTests {
    private let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("platform-tests-\(UUID().uuidString)").path

    @Test func theLiveLayerRoundTripsAFileThroughWriteSyncRenameAndRead() throws {
        let syscalls = Syscalls.live
        try syscalls.makeDirectory(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try syscalls.fileKind(directory) == .directory)

        let temporary = directory + "/file.tmp"
        let final = directory + "/file"
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let descriptor = try syscalls.openFile(temporary, flags: O_WRONLY | O_CREAT | O_TRUNC)
        try syscalls.writeAll(descriptor, bytes, at: 0)
        try syscalls.writeAll(descriptor, [1, 2, 3], at: 2)
        try syscalls.fullSync(descriptor)
        syscalls.close(descriptor)
        try syscalls.rename(temporary, to: final)
        try syscalls.syncDirectory(directory)

        var expected = bytes
        expected.replaceSubrange(2..<5, with: [1, 2, 3])
        #expect(try syscalls.readFile(final) == expected)
        #expect(try syscalls.directoryEntries(directory) == ["file"])
        #expect(try syscalls.fileKind(final) == .other)

        try syscalls.removeFile(final)
        #expect(try syscalls.fileKind(final) == .missing)
    }

    @Test func failuresOfTheLiveLayerAreTypedErrnos() throws {
        let missing = directory + "/absent/file"
        #expect(throws: Errno.noSuchFileOrDirectory) { try Syscalls.live.readFile(missing) }
        #expect(throws: Errno.noSuchFileOrDirectory) { try Syscalls.live.removeFile(missing) }
        try Syscalls.live.makeDirectory(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: Errno.fileExists) { try Syscalls.live.makeDirectory(directory) }
    }

    @Test func anInjectedFaultSurfacesAsItsErrnoAndTheCallHasNoEffect() throws {
        try Syscalls.live.makeDirectory(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/file"
        let faulty = Syscalls(injectingFaults: { call in
            switch call {
            case .sync: .fail(.noSpace)
            case .makeDirectory: .fail(.permissionDenied)
            case .open: .fail(.tooManyOpenFiles)
            default: nil
            }
        })
        #expect(faulty.injectsFaults)
        #expect(!Syscalls.live.injectsFaults)

        let descriptor = try Syscalls.live.openFile(path, flags: O_WRONLY | O_CREAT)
        defer { Syscalls.live.close(descriptor) }
        try faulty.writeAll(descriptor, [1, 2, 3], at: 0)
        #expect(throws: Errno.noSpace) { try faulty.dataSync(descriptor) }
        #expect(throws: Errno.noSpace) { try faulty.fullSync(descriptor) }
        // A directory sync opens the directory first, and the open is what fails here.
        #expect(throws: Errno.tooManyOpenFiles) { try faulty.syncDirectory(directory) }
        #expect(throws: Errno.permissionDenied) { try faulty.makeDirectory(directory + "/sub") }
        #expect(try Syscalls.live.fileKind(directory + "/sub") == .missing)
        #expect(throws: Errno.tooManyOpenFiles) { try faulty.readFile(path) }
        // Another layer, even one built at the same time, is untouched by these faults.
        try Syscalls.live.dataSync(descriptor)
        #expect(try Syscalls.live.readFile(path) == [1, 2, 3])
    }

    @Test func aShortWriteIsContinuedUntilEveryByteIsWritten() throws {
        try Syscalls.live.makeDirectory(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let writes = Mutex(0)
        let faulty = Syscalls(injectingFaults: { call in
            guard call == .write else { return nil }
            writes.withLock { $0 += 1 }
            return .limitBytes(3)
        })
        let path = directory + "/file"
        let descriptor = try faulty.openFile(path, flags: O_WRONLY | O_CREAT)
        let bytes = Array(UInt8(0)..<UInt8(20))
        try faulty.writeAll(descriptor, bytes, at: 0)
        faulty.close(descriptor)
        #expect(try faulty.readFile(path) == bytes)
        #expect(writes.withLock { $0 } == 7)
    }

    @Test func aFailureAfterAShortWriteStopsTheWriteWithThatErrno() throws {
        try Syscalls.live.makeDirectory(directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = Mutex<[InjectedFault]>([.limitBytes(4), .fail(.ioError)])
        let faulty = Syscalls(injectingFaults: { call in
            guard call == .write else { return nil }
            return script.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        })
        let path = directory + "/file"
        let descriptor = try faulty.openFile(path, flags: O_WRONLY | O_CREAT)
        defer { faulty.close(descriptor) }
        #expect(throws: Errno.ioError) { try faulty.writeAll(descriptor, Array(repeating: 9, count: 10), at: 0) }
        #expect(try faulty.readFile(path) == [9, 9, 9, 9])
    }
}
