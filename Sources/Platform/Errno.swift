// C `errno` values as a type, so the journal and the transport match failures by name
// (`.noSpace`, `.wouldBlock`) rather than by integer, and print them with the system's words.
import Glibc

/// A C `errno` value.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now, right after a failed call.
    static var current: Errno { Errno(errno) }

    /// The system's words for it alone ("No such file or directory"), for messages to a person.
    public var reason: String { String(cString: strerror(rawValue)) }

    public var description: String {
        "\(reason) (errno \(rawValue))"
    }

    // MARK: Any call

    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let ioError = Errno(EIO)
    public static let outOfMemory = Errno(ENOMEM)
    public static let tooManyOpenFiles = Errno(EMFILE)
    public static let tooManyOpenFilesInSystem = Errno(ENFILE)

    // MARK: Files

    public static let noSuchFileOrDirectory = Errno(ENOENT)
    public static let fileExists = Errno(EEXIST)
    public static let notADirectory = Errno(ENOTDIR)
    public static let permissionDenied = Errno(EACCES)
    public static let operationNotPermitted = Errno(EPERM)
    public static let readOnlyFileSystem = Errno(EROFS)
    public static let noSpace = Errno(ENOSPC)
    public static let diskQuotaExceeded = Errno(EDQUOT)

    // MARK: Sockets

    public static let inProgress = Errno(EINPROGRESS)
    public static let noBufferSpace = Errno(ENOBUFS)
    public static let brokenPipe = Errno(EPIPE)
    public static let connectionReset = Errno(ECONNRESET)
    public static let connectionRefused = Errno(ECONNREFUSED)
    public static let connectionAborted = Errno(ECONNABORTED)
    public static let timedOut = Errno(ETIMEDOUT)

    // MARK: Kinds

    /// The disk or the user's quota is full: the failure an operator fixes by freeing space, not
    /// by replacing hardware.
    public var isOutOfSpace: Bool { self == .noSpace || self == .diskQuotaExceeded }

    /// The process may not do this to the file (mode bits, a read-only mount).
    public var isPermissionDenied: Bool {
        self == .permissionDenied || self == .operationNotPermitted || self == .readOnlyFileSystem
    }

    /// The descriptor table (the process's or the system's) or kernel memory ran out; waiting
    /// for other descriptors to close helps, retrying at once does not.
    public var isResourceExhaustion: Bool {
        self == .tooManyOpenFiles || self == .tooManyOpenFilesInSystem || self == .noBufferSpace || self == .outOfMemory
    }
}
