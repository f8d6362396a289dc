// `bangbang admin`'s online mode: the running server, reached over /ws with BangbangClient (the
// library apps are written on), logged in as the built-in administrator with the admin secret.
//
// Where: `--url`, or the address the configuration gives — ws:// for a plain server, wss:// for
// one that serves TLS (its `--tls-cert`), on loopback either way, because the admin secret is
// accepted only there (a wss:// connection to 127.0.0.1 is loopback too).
// Trust for wss://: `--ca-file` when given; otherwise the system's CAs plus the server's own
// certificate file from the configuration, so a self-signed server works with no flag. The
// certificate is checked against `--server-name`, or, when the CLI reaches the server by a
// loopback address with the server's certificate at hand, against the name that certificate
// is issued for (its DNS name; for a certificate with no DNS subjectAltName, its CN, as a bare
// `openssl req -x509 -subj /CN=localhost` makes; else its IP address); never with verification
// turned off.
//
// A command line runs one request, so the connection is made once, without retrying: the first
// failure is the answer (exit status 69).
import BangbangApplication
import BangbangClient
import BangbangProtocol
import BangbangServer
import Dispatch
import SocketServer
import Synchronization

enum AdminOnline {
    enum Failure: Error, Sendable, Equatable {
        /// The server could not be reached, or the connection broke (exit 69).
        case unreachable(String)
        /// The server refused the admin secret (exit 1).
        case secretRefused(String)
    }

    /// The endpoint to administer the server that `configuration` describes.
    static func endpoint(for invocation: AdminInvocation, configuration: ServerConfiguration) throws(ConfigurationError) -> ServerEndpoint {
        let url: ServerURL
        if let text = invocation.url {
            do { url = try ServerURL(parsing: text) } catch { throw ConfigurationError("bad --url: \(error)") }
        } else {
            let scheme = configuration.tlsCertificatePath == nil ? "ws" : "wss"
            do {
                url = try ServerURL(parsing: "\(scheme)://\(AdminCLI.loopbackHost(configuration.host)):\(configuration.port)/ws")
            } catch {
                throw ConfigurationError("cannot make a URL from --host and --port: \(error)")
            }
        }
        var endpoint = ServerEndpoint(url: url)
        guard url.isSecure else {
            if invocation.caFile != nil || invocation.serverName != nil {
                throw ConfigurationError("--ca-file and --server-name are for wss:// URLs")
            }
            return endpoint
        }
        if let caFile = invocation.caFile {
            endpoint.trustedCertificatePaths = [caFile]
            endpoint.usesSystemTrustStore = false
        } else if let ownCertificate = configuration.tlsCertificatePath {
            endpoint.trustedCertificatePaths = [ownCertificate]
        }
        if let serverName = invocation.serverName {
            endpoint.serverName = serverName
        } else if url.isLoopback, let ownCertificate = configuration.tlsCertificatePath {
            do {
                endpoint.serverName = try TLSCertificateFile.peerName(ofCertificateAt: ownCertificate)
            } catch {
                throw ConfigurationError("\(error); give --server-name NAME")
            }
        }
        return endpoint
    }

    /// Logs in with `secret` and sends `request`; blocks the calling thread until done.
    static func run(_ request: RawRequest, secret: String, endpoint: ServerEndpoint) -> Result<Result<JSONValue, AdminReplyError>, Failure> {
        let outcome = Mutex<Result<Result<JSONValue, AdminReplyError>, Failure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result = await exchange(request, secret: secret, endpoint: endpoint)
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { fatalError("internal inconsistency in AdminOnline: no outcome") }
        return result
    }

    private static func exchange(_ request: RawRequest, secret: String,
                                 endpoint: ServerEndpoint) async -> Result<Result<JSONValue, AdminReplyError>, Failure> {
        let connection = BangbangConnection(configuration: ConnectionConfiguration(endpoint: endpoint),
                                            store: MemorySessionStore())
        let result = await exchange(request, secret: secret, on: connection)
        await connection.disconnect()
        return result
    }

    private static func exchange(_ request: RawRequest, secret: String,
                                 on connection: BangbangConnection) async -> Result<Result<JSONValue, AdminReplyError>, Failure> {
        // The first attempt decides: a tool does not wait through reconnections.
        let firstAttempt = Task {
            for await update in connection.updates {
                switch update {
                case .stateChanged(.online): return Result<Void, Failure>.success(())
                case .stateChanged(.waiting(_, let reason)): return .failure(.unreachable(reason))
                default: continue
                }
            }
            return .failure(.unreachable("the connection stopped"))
        }
        let connecting = Task { try await connection.connect() }
        defer { connecting.cancel() }
        if case .failure(let failure) = await firstAttempt.value { return .failure(failure) }
        do {
            _ = try await connection.send(LogInAsAdministrator(secret: secret))
        } catch {
            if case .server(let refusal) = error { return .failure(.secretRefused(refusal.message)) }
            return .failure(.unreachable("\(error)"))
        }
        do {
            return .success(.success(try await connection.send(request)))
        } catch {
            guard case .server(let refusal) = error else { return .failure(.unreachable("\(error)")) }
            return .success(.failure(AdminReplyError(code: refusal.code.rawValue, message: refusal.message)))
        }
    }
}
