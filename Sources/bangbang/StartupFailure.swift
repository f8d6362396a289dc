// Why the server could not start, in words an operator acts on: what could not be done, to which
// address or path, and what to try. The lower modules report typed values (a socket call and its
// errno, a journal error, an OpenSSL message); only here are the settings known that a person
// changes to fix them (`--port`, `--host`, `--data-dir`, `--tls-cert`, `--tls-key`), so the
// sentence is made here, once, for every way a start can fail.
import BangbangServer
import Foundation
import Journal
import Platform
import SocketServer

enum StartupFailure {
    /// The sentence after "bangbang: cannot start: ".
    static func describe(_ error: any Error, host: String, port: Int, dataDirectory: String,
                         certificatePath: String?, keyPath: String?) -> String {
        switch error {
        case let error as SocketError:
            return describe(error, host: host, port: port, certificatePath: certificatePath, keyPath: keyPath)
        case let error as JournalError:
            return describe(error, dataDirectory: dataDirectory)
        default:
            return String(describing: error)
        }
    }

    private static func describe(_ error: SocketError, host: String, port: Int, certificatePath: String?,
                                 keyPath: String?) -> String {
        switch error {
        case .addressResolution(let name):
            return "\(name) is not an address this server can listen on: give an IPv4 or IPv6 address with --host "
                + "(127.0.0.1 for this machine only, 0.0.0.0 for every address)"
        case .system(let call, let errno) where call.hasPrefix("listen on"):
            switch errno.rawValue {
            case EADDRINUSE:
                return "port \(port) is in use on \(host): is another server running? stop it, or choose another port with --port"
            case EADDRNOTAVAIL:
                return "\(host) is not an address of this machine, so nothing can listen on it: choose one it has with --host "
                    + "(127.0.0.1, 0.0.0.0 for every address, or one that `ip address` lists)"
            case EACCES, EPERM:
                return "port \(port) on \(host) needs privileges this user does not have: choose a port above 1023 with --port, "
                    + "or let systemd's socket or capabilities (CAP_NET_BIND_SERVICE) grant it"
            default:
                return "cannot listen on \(host) port \(port): \(errno.reason) (errno \(errno.rawValue)); check --host and --port"
            }
        case .system(let call, let errno):
            return "\(call) failed: \(errno.reason) (errno \(errno.rawValue))"
        case .tls(let detail):
            return describeTLS(detail, certificatePath: certificatePath, keyPath: keyPath)
        }
    }

    /// OpenSSL says what failed in its own terms; the files it was given are checked here so the
    /// sentence names the one that is wrong and the setting that names it.
    private static func describeTLS(_ detail: String, certificatePath: String?, keyPath: String?) -> String {
        for (path, setting, what) in [(certificatePath, "--tls-cert", "certificate"), (keyPath, "--tls-key", "private key")] {
            guard let path else { continue }
            if let problem = unreadable(path) {
                return "the TLS \(what) file \(path) cannot be read (\(problem)): check \(setting), and that the server's user may read it"
            }
        }
        if detail.contains("key values mismatch") || detail.hasPrefix("private key does not match") {
            return "the private key \(keyPath ?? "") does not belong to the certificate \(certificatePath ?? ""): "
                + "give --tls-key the key the certificate was made with"
        }
        if detail.hasPrefix("cannot load certificate") {
            return "the TLS certificate \(certificatePath ?? "") is not a PEM certificate OpenSSL can read (\(openSSLReason(detail))): "
                + "check --tls-cert"
        }
        if detail.hasPrefix("cannot load private key") {
            return "the TLS private key \(keyPath ?? "") is not a PEM key OpenSSL can read (\(openSSLReason(detail))): check --tls-key"
        }
        return "TLS cannot be set up: \(detail)"
    }

    /// Why a file cannot be read, or nil when it can.
    private static func unreadable(_ path: String) -> String? {
        var status = stat()
        if stat(path, &status) != 0 { return Errno(errno).reason.lowercased() }
        if (status.st_mode & S_IFMT) == S_IFDIR { return "it is a directory" }
        if access(path, R_OK) != 0 { return Errno(errno).reason.lowercased() }
        return nil
    }

    /// The last of OpenSSL's queued reasons ("error:…:SSL routines::no start line" → "no start line").
    private static func openSSLReason(_ detail: String) -> String {
        let last = detail.split(separator: ";").last.map(String.init) ?? detail
        return last.split(separator: ":", omittingEmptySubsequences: true).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? last
    }

    private static func describe(_ error: JournalError, dataDirectory: String) -> String {
        switch error {
        case .io(let code):
            // At start the journal's first calls create and lock the data directory: a failure
            // there is about the directory, not a write of a batch.
            let reason = Errno(code).reason
            if !FileManager.default.fileExists(atPath: dataDirectory) {
                return "the data directory \(dataDirectory) does not exist and cannot be created (\(reason)): "
                    + "create it, or choose another with --data-dir"
            }
            return "the data directory \(dataDirectory) cannot be used (\(reason)): check it, or choose another with --data-dir"
        case .noSpace:
            return "the disk of the data directory \(dataDirectory) is full: free space, or choose another with --data-dir"
        case .permissionDenied(let path):
            return "the data directory \(dataDirectory) is not writable by this user (permission denied on \(path)): "
                + "give the server's user read, write and execute rights on it, or choose another with --data-dir"
        case .notADirectory(let path):
            return "\(path) exists but is not a directory: choose another --data-dir, or move that file away"
        case .directoryLocked(let path):
            return "the data directory \(path) is locked by another running server: stop that server first, "
                + "or give this one another --data-dir"
        default:
            return error.description
        }
    }
}
