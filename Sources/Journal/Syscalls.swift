// Every libc call the journal makes lives in this file, for two reasons: EINTR is retried in one
// place instead of at every call site, and tests can force the failures that matter for durability
// (ENOSPC and EIO from write or fsync, short writes) without a full disk or a broken drive.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The kinds of call a test can inject a fault into.
enum SyscallOperation: Sendable, Equatable {
    case open
    case read
    case write
    case sync
    case truncate
    case rename
    case unlink
    case makeDirectory
    case lock
}

/// What an injected fault does to the call it is attached to.
enum InjectedFault: Sendable, Equatable {
    /// The call fails with this errno and has no effect.
    case fail(Int32)
    /// A write transfers at most this many bytes (at least one), like a real short write.
    case shortWrite(Int)
}

/// A failed system call: which call, its errno, and the path when there is one.
struct SystemCallError: Error, Sendable {
    var operation: SyscallOperation
    var errno: Int32
    var path: String?
}

/// The journal's door to the operating system. `live` is the real thing; tests build one with a
/// fault hook, which is consulted before every call of the given kind (per underlying `pwrite` for
/// writes, so a script can make the first chunk short and the second fail).
final class Syscalls: Sendable {
    typealias FaultHook = @Sendable (SyscallOperation) -> InjectedFault?

    static let live = Syscalls()

    private let faultHook: FaultHook?

    init(faultHook: FaultHook? = nil) {
        self.faultHook = faultHook
    }

    private func injectedFault(_ operation: SyscallOperation) -> InjectedFault? {
        faultHook?(operation)
    }

    private func failIfInjected(_ operation: SyscallOperation, path: String? = nil) throws(SystemCallError) {
        if case .fail(let code) = injectedFault(operation) {
            throw SystemCallError(operation: operation, errno: code, path: path)
        }
    }

    // MARK: Descriptors

    /// `mode` applies only when `flags` creates the file. Default 0o644: the journal's files are
    /// the server's to write, and readable for backups and inspection.
    func openFile(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(SystemCallError) -> Int32 {
        try failIfInjected(.open, path: path)
        while true {
            let descriptor = Glibc.open(path, flags | O_CLOEXEC, mode)
            if descriptor >= 0 { return descriptor }
            if errno == EINTR { continue }
            throw SystemCallError(operation: .open, errno: errno, path: path)
        }
    }

    /// Closes without retrying: on Linux the descriptor is gone even when close reports EINTR, and a
    /// retry could close a descriptor another thread has just been given.
    func closeFile(_ descriptor: Int32) {
        _ = Glibc.close(descriptor)
    }

    /// Writes all of `bytes` at `offset`, looping over short writes.
    func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(SystemCallError) {
        var written = 0
        while written < bytes.count {
            var chunk = bytes.count - written
            switch injectedFault(.write) {
            case .fail(let code)?:
                throw SystemCallError(operation: .write, errno: code, path: nil)
            case .shortWrite(let limit)?:
                chunk = min(chunk, max(1, limit))
            case nil:
                break
            }
            let result = pwrite(descriptor, bytes.baseAddress! + written, chunk, off_t(offset + written))
            if result > 0 {
                written += result
            } else if result < 0 && errno == EINTR {
                continue
            } else {
                // A zero-byte write of a non-empty buffer makes no progress; report it as an I/O error
                // rather than spinning.
                throw SystemCallError(operation: .write, errno: result < 0 ? errno : EIO, path: nil)
            }
        }
    }

    func writeAll(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int) throws(SystemCallError) {
        let result: Result<Void, SystemCallError> = bytes.withUnsafeBytes { raw in
            Result { () throws(SystemCallError) in try writeAll(descriptor, raw, at: offset) }
        }
        try result.get()
    }

    /// fdatasync: the record bytes and the file size, without unrelated metadata such as mtime.
    func dataSync(_ descriptor: Int32) throws(SystemCallError) {
        try failIfInjected(.sync)
        while fdatasync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw SystemCallError(operation: .sync, errno: errno, path: nil)
        }
    }

    /// fsync: used for snapshot files and directories, where the metadata is the point.
    func fullSync(_ descriptor: Int32) throws(SystemCallError) {
        try failIfInjected(.sync)
        while fsync(descriptor) != 0 {
            if errno == EINTR { continue }
            throw SystemCallError(operation: .sync, errno: errno, path: nil)
        }
    }

    func truncate(_ descriptor: Int32, toLength length: Int) throws(SystemCallError) {
        try failIfInjected(.truncate)
        while ftruncate(descriptor, off_t(length)) != 0 {
            if errno == EINTR { continue }
            throw SystemCallError(operation: .truncate, errno: errno, path: nil)
        }
    }

    /// Takes an exclusive advisory lock without waiting; EWOULDBLOCK means another holder.
    func lockExclusively(_ descriptor: Int32, path: String) throws(SystemCallError) {
        try failIfInjected(.lock, path: path)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            throw SystemCallError(operation: .lock, errno: errno, path: path)
        }
    }

    // MARK: Paths

    /// Reads a whole file. Journal segments and snapshots are read once, at open.
    func readFile(_ path: String) throws(SystemCallError) -> [UInt8] {
        let descriptor = try openFile(path, flags: O_RDONLY)
        defer { closeFile(descriptor) }
        try failIfInjected(.read, path: path)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw SystemCallError(operation: .read, errno: errno, path: path)
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let result = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if result > 0 {
                filled += result
            } else if result == 0 {
                break
            } else if errno != EINTR {
                throw SystemCallError(operation: .read, errno: errno, path: path)
            }
        }
        if filled < bytes.count { bytes.removeSubrange(filled...) }
        return bytes
    }

    func rename(_ source: String, to destination: String) throws(SystemCallError) {
        try failIfInjected(.rename, path: destination)
        guard Glibc.rename(source, destination) == 0 else {
            throw SystemCallError(operation: .rename, errno: errno, path: destination)
        }
    }

    func removeFile(_ path: String) throws(SystemCallError) {
        try failIfInjected(.unlink, path: path)
        guard unlink(path) == 0 else {
            throw SystemCallError(operation: .unlink, errno: errno, path: path)
        }
    }

    func makeDirectory(_ path: String) throws(SystemCallError) {
        try failIfInjected(.makeDirectory, path: path)
        guard mkdir(path, 0o755) == 0 else {
            throw SystemCallError(operation: .makeDirectory, errno: errno, path: path)
        }
    }

    enum FileKind { case missing, directory, other }

    func fileKind(_ path: String) throws(SystemCallError) -> FileKind {
        var status = stat()
        if stat(path, &status) != 0 {
            if errno == ENOENT { return .missing }
            throw SystemCallError(operation: .open, errno: errno, path: path)
        }
        return (status.st_mode & S_IFMT) == S_IFDIR ? .directory : .other
    }

    func directoryEntries(_ path: String) throws(SystemCallError) -> [String] {
        guard let directory = opendir(path) else {
            throw SystemCallError(operation: .open, errno: errno, path: path)
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { tuple in
                UnsafeRawPointer(tuple).withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Makes creations, renames and removals inside a directory durable (the entries live in the
    /// directory, not in the files).
    func syncDirectory(_ path: String) throws(SystemCallError) {
        let descriptor = try openFile(path, flags: O_RDONLY | O_DIRECTORY)
        defer { closeFile(descriptor) }
        try fullSync(descriptor)
    }
}
