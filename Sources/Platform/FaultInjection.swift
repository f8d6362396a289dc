// What a test can make the system calls do: fail with a chosen errno, or move fewer bytes than
// asked, on exactly the calls it names. Faults belong to one `Syscalls` value, so a test that
// breaks its own journal's disk or its own server's sockets never touches another journal,
// server or client in the same process.

/// The kinds of call a fault can be attached to.
public enum SystemCall: Sendable, Hashable {
    // Files
    case open
    /// `read`: a whole file (`readFile`) or a socket.
    case read
    /// `pwrite` into a file, consulted once per underlying call of `writeAll`.
    case write
    /// `fdatasync` and `fsync`.
    case sync
    case truncate
    case rename
    case unlink
    case makeDirectory
    case lock
    // Sockets
    case accept
    case connect
    /// `sendVectors` on a socket.
    case sendVectors
}

/// What an injected fault does to the call it is attached to.
public enum InjectedFault: Sendable, Equatable {
    /// The call fails with this errno and has no effect (for a non-blocking socket call,
    /// `.wouldBlock` reads as "not ready", like the real thing).
    case fail(Errno)
    /// The call transfers at most this many bytes (at least one), like a real short write or
    /// short read. Applies to `write`, `sendVectors` and socket `read`; ignored elsewhere.
    case limitBytes(Int)
}
