// File calls: what the journal needs to create, write, sync, lock and recover its data
// directory.
import Glibc

extension Syscalls {
    /// What a path names, as far as opening a data directory cares.
    public enum FileKind: Sendable, Equatable { case missing, directory, other }

    /// Opens `path` close-on-exec. `mode` applies only when `flags` creates the file. Default
    /// 0o644: the server's files are its own to write, and readable for backups and inspection.
    public func openFile(_ path: String, flags: Int32, mode: mode_t = 0o644) throws(Errno) -> Int32 {
        try failIfInjected(.open)
        return Int32(try retryingInterrupts { Int(Glibc.open(path, flags | O_CLOEXEC, mode)) })
    }

    /// Writes all of `bytes` at `offset`, looping over short writes.
    public func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(Errno) {
        var written = 0
        while written < bytes.count {
            var chunk = bytes.count - written
            switch injectedFault(.write) {
            case .fail(let error)?:
                throw error
            case .limitBytes(let limit)?:
                chunk = min(chunk, max(1, limit))
            case nil:
                break
            }
            let result = try retryingInterrupts {
                pwrite(descriptor, bytes.baseAddress! + written, chunk, off_t(offset + written))
            }
            // A zero-byte write of a non-empty buffer makes no progress; report it as an I/O error
            // rather than spinning.
            guard result > 0 else { throw Errno.ioError }
            written += result
        }
    }

    public func writeAll(_ descriptor: Int32, _ bytes: [UInt8], at offset: Int) throws(Errno) {
        let result: Result<Void, Errno> = bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) in try writeAll(descriptor, raw, at: offset) }
        }
        try result.get()
    }

    /// fdatasync: the written bytes and the file size, without unrelated metadata such as mtime.
    public func dataSync(_ descriptor: Int32) throws(Errno) {
        try failIfInjected(.sync)
        _ = try retryingInterrupts { Int(fdatasync(descriptor)) }
    }

    /// fsync: for new files and directories, where the metadata is the point.
    public func fullSync(_ descriptor: Int32) throws(Errno) {
        try failIfInjected(.sync)
        _ = try retryingInterrupts { Int(fsync(descriptor)) }
    }

    public func truncate(_ descriptor: Int32, toLength length: Int) throws(Errno) {
        try failIfInjected(.truncate)
        _ = try retryingInterrupts { Int(ftruncate(descriptor, off_t(length))) }
    }

    /// Takes an exclusive advisory lock without waiting; `.wouldBlock` means another holder.
    public func lockExclusively(_ descriptor: Int32) throws(Errno) {
        try failIfInjected(.lock)
        _ = try retryingInterrupts { Int(flock(descriptor, LOCK_EX | LOCK_NB)) }
    }

    /// Reads a whole file, sized by `fstat` when it is opened.
    public func readFile(_ path: String) throws(Errno) -> [UInt8] {
        let descriptor = try openFile(path, flags: O_RDONLY)
        defer { close(descriptor) }
        try failIfInjected(.read)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Errno.current }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let result = try bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(Errno) in
                    try retryingInterrupts { Glibc.read(descriptor, buffer.baseAddress! + filled, buffer.count - filled) }
                }
            }.get()
            if result == 0 { break }
            filled += result
        }
        if filled < bytes.count { bytes.removeSubrange(filled...) }
        return bytes
    }

    public func rename(_ source: String, to destination: String) throws(Errno) {
        try failIfInjected(.rename)
        guard Glibc.rename(source, destination) == 0 else { throw Errno.current }
    }

    public func removeFile(_ path: String) throws(Errno) {
        try failIfInjected(.unlink)
        guard unlink(path) == 0 else { throw Errno.current }
    }

    /// Makes a directory readable and searchable by everyone, writable by its owner (0o755).
    public func makeDirectory(_ path: String) throws(Errno) {
        try failIfInjected(.makeDirectory)
        guard mkdir(path, 0o755) == 0 else { throw Errno.current }
    }

    public func fileKind(_ path: String) throws(Errno) -> FileKind {
        var status = stat()
        if stat(path, &status) != 0 {
            let error = Errno.current
            if error == .noSuchFileOrDirectory { return .missing }
            throw error
        }
        return (status.st_mode & S_IFMT) == S_IFDIR ? .directory : .other
    }

    /// The names in a directory, without `.` and `..`, in no particular order.
    public func directoryEntries(_ path: String) throws(Errno) -> [String] {
        guard let directory = opendir(path) else { throw Errno.current }
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
    public func syncDirectory(_ path: String) throws(Errno) {
        let descriptor = try openFile(path, flags: O_RDONLY | O_DIRECTORY)
        defer { close(descriptor) }
        try fullSync(descriptor)
    }
}
