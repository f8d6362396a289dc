// `bangbang admin`: the operator's command line. Theory of operation:
//
//   parse → load the server's configuration (same flags, env, file) → is the data directory
//   locked?  yes → online: read <data-dir>/admin-secret, connect (AdminOnline: ws:// or wss://,
//                  over BangbangClient), auth.admin_secret, send the command's request, print
//                  the reply
//            no  → offline: recover the data directory in-process (OfflineAdmin), run the
//                  command as the built-in administrator, journal a change, close
//
// Both modes send the same requests and print the same replies (tables, or `--json`), so a
// script does not care which one ran. `journal` reads the directory in both.
import BangbangApplication
import BangbangClient
import BangbangProtocol
import BangbangServer
import Foundation
import Platform

enum AdminCLI {
    /// Runs `bangbang admin ARGUMENTS…`; returns the process exit status.
    static func run(arguments: [String], environment: [String: String]) -> Int32 {
        if arguments.isEmpty || arguments.contains("--help") || arguments.contains("-h") || arguments.first == "help" {
            print(AdminInvocation.helpText)
            return 0
        }
        let invocation: AdminInvocation
        let configuration: ServerConfiguration
        do {
            invocation = try AdminInvocation.parse(arguments)
            configuration = try ConfigurationLoader.load(arguments: invocation.serverArguments, environment: environment).configuration
        } catch {
            return fail("\(error.message)", status: 64)
        }
        if case .restore(let backup, let force) = invocation.command {
            do {
                let manifest = try DataBackup.restore(from: backup, into: configuration.dataDirectory, force: force)
                print("restored \(manifest.files.count) files from \(backup) into \(configuration.dataDirectory) "
                      + "(journal cut at sequence \(manifest.cutSequence)); start the server on it")
                return 0
            } catch {
                return fail(error.description, status: 70)
            }
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: configuration.dataDirectory, isDirectory: &isDirectory),
              isDirectory.boolValue else {
            // Never create one: a mistyped --data-dir must not look like an empty server.
            return fail("no data directory at \(configuration.dataDirectory); give the server's --data-dir (or --config)",
                        status: 70)
        }
        let isLocked = isDirectoryLocked(configuration.dataDirectory)
        let isOnline = switch invocation.mode {
        case .auto: isLocked
        case .online: true
        case .offline: false
        }
        if invocation.mode == .offline, isLocked {
            return fail("the server is running (\(configuration.dataDirectory) is locked): stop it, or drop --offline", status: 70)
        }

        if case .backup(let target) = invocation.command {
            do {
                let summary = try DataBackup.backup(dataDirectory: configuration.dataDirectory, into: target)
                for file in summary.manifest.files { print("\(file.name)\t\(file.size) bytes") }
                print("backup of \(configuration.dataDirectory) in \(target): \(summary.manifest.files.count) files, "
                      + "journal cut at sequence \(summary.manifest.cutSequence) (the snapshot's; the copied journal "
                      + "records after it are replayed on restore)")
                return 0
            } catch {
                return fail(error.description, status: 70)
            }
        }
        let reply: Result<JSONValue, AdminReplyError>
        if invocation.command == .journal {
            do {
                reply = .success(try JournalInspection.inspect(configuration, isLocked: isLocked))
            } catch {
                return fail("cannot read \(configuration.dataDirectory): \(error)", status: 70)
            }
        } else if isOnline {
            guard let secret = AdminSecret.read(from: configuration.dataDirectory) else {
                return fail("cannot read \(AdminSecret.path(in: configuration.dataDirectory)): run as the server's user, "
                            + "with the server's --data-dir", status: 70)
            }
            guard let request = invocation.command.request else {
                fatalError("internal inconsistency in AdminCLI: a command without a request")
            }
            let endpoint: ServerEndpoint
            do { endpoint = try AdminOnline.endpoint(for: invocation, configuration: configuration) } catch {
                return fail(error.message, status: 64)
            }
            switch AdminOnline.run(RawRequest(operation: request.operation, data: request.data), secret: secret,
                                   endpoint: endpoint) {
            case .success(let answer): reply = answer
            case .failure(.secretRefused(let message)): return fail("the server refused the admin secret: \(message)", status: 1)
            case .failure(.unreachable(let reason)): return fail("cannot reach the server at \(endpoint.url): \(reason)", status: 69)
            }
        } else {
            guard case .administer(let action) = invocation.command else {
                fatalError("internal inconsistency in AdminCLI: a command without an offline action")
            }
            do {
                reply = try OfflineAdmin.run(action, configuration: configuration, logger: Logger(level: .warning))
            } catch {
                return fail("cannot open \(configuration.dataDirectory): \(error)", status: 70)
            }
        }

        switch reply {
        case .success(let data):
            print(invocation.printsJSON ? JSONWriter.string(data) : AdminOutput.render(data))
            return 0
        case .failure(let error):
            if invocation.printsJSON {
                print(JSONWriter.string(["error": ["code": .string(error.code), "message": .string(error.message)]]))
            }
            return fail("\(error.code): \(error.message)", status: 1)
        }
    }

    /// The address to reach a server that listens on `host`: a wildcard listener is reached
    /// over loopback, which is also the only place the admin secret is accepted.
    static func loopbackHost(_ host: String) -> String {
        switch host {
        case "0.0.0.0", "": "127.0.0.1"
        case "::": "[::1]"
        default: host.contains(":") ? "[\(host)]" : host
        }
    }

    /// Whether a server holds the directory's `LOCK` (flock, as the journal takes it).
    static func isDirectoryLocked(_ directory: String) -> Bool {
        let system = Syscalls.live
        guard let descriptor = try? system.openFile((directory as NSString).appendingPathComponent("LOCK"), flags: O_RDONLY) else {
            return false
        }
        // Closing the descriptor releases a lock this check took.
        defer { system.close(descriptor) }
        do { try system.lockExclusively(descriptor) } catch { return error == .wouldBlock }
        return false
    }

    private static func fail(_ message: String, status: Int32) -> Int32 {
        FileHandle.standardError.write(Data("bangbang admin: \(message)\n".utf8))
        return status
    }
}
