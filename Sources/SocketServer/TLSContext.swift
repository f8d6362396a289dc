// TLS settings and the shared OpenSSL context built from them.
import COpenSSL

/// How to speak TLS: as a server with a certificate, or as a client.
public struct TLSConfiguration: Sendable {
    enum Role: Sendable {
        case server(certificatePath: String, keyPath: String)
        case client(verifiesPeer: Bool, trustedCertificatePaths: [String], usesSystemTrustStore: Bool)
    }

    let role: Role

    /// A server identity from PEM files (certificate chain and private key). TLS 1.2 is the
    /// minimum version: older versions are deprecated (RFC 8996).
    public init(certificatePath: String, keyPath: String) {
        role = .server(certificatePath: certificatePath, keyPath: keyPath)
    }

    /// A client. `verifiesPeer: false` accepts any certificate (load tests against
    /// self-signed servers); otherwise the chain is checked against `trustedCertificatesPath`
    /// (a PEM file) or, when nil, the system trust store.
    public static func client(verifiesPeer: Bool = true, trustedCertificatesPath: String? = nil) -> TLSConfiguration {
        TLSConfiguration(role: .client(verifiesPeer: verifiesPeer, trustedCertificatePaths: trustedCertificatesPath.map { [$0] } ?? [],
                                       usesSystemTrustStore: trustedCertificatesPath == nil))
    }

    /// A client that verifies the server's chain against the certificates in `paths` (PEM files:
    /// a test CA, or a server's own self-signed certificate) and, when
    /// `includingSystemTrustStore`, the system's trust store as well. The certificate must also
    /// name the host connected to (see `SocketClient.connect`).
    public static func client(trusting paths: [String], includingSystemTrustStore: Bool) -> TLSConfiguration {
        precondition(!paths.isEmpty || includingSystemTrustStore, "a client must trust something")
        return TLSConfiguration(role: .client(verifiesPeer: true, trustedCertificatePaths: paths,
                                              usesSystemTrustStore: includingSystemTrustStore))
    }

    private init(role: Role) { self.role = role }

    var isServer: Bool {
        if case .server = role { return true }
        return false
    }
}

/// An OpenSSL `SSL_CTX`, built once and shared by every connection that uses it.
///
/// Immutable after initialisation; OpenSSL permits creating sessions from one context on
/// several threads.
public final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    let isServer: Bool
    /// A client that checks the server's certificate (chain and name).
    let verifiesPeer: Bool

    public init(configuration: TLSConfiguration) throws(SocketError) {
        isServer = configuration.isServer
        if case .client(let verifies, _, _) = configuration.role { verifiesPeer = verifies } else { verifiesPeer = false }
        guard let context = SSL_CTX_new(isServer ? TLS_server_method() : TLS_client_method()) else {
            throw .tls("SSL_CTX_new failed: \(TLSContext.drainErrors())")
        }
        self.context = context
        _ = bangbang_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        // Buffers are released while a connection is idle: thousands of idle TLS clients
        // would otherwise hold two 16 KiB record buffers each.
        _ = bangbang_SSL_CTX_set_mode(context, Int(SSL_MODE_RELEASE_BUFFERS))
        switch configuration.role {
        case .server(let certificatePath, let keyPath):
            guard SSL_CTX_use_certificate_chain_file(context, certificatePath) == 1 else {
                throw .tls("cannot load certificate \(certificatePath): \(TLSContext.drainErrors())")
            }
            guard SSL_CTX_use_PrivateKey_file(context, keyPath, SSL_FILETYPE_PEM) == 1 else {
                throw .tls("cannot load private key \(keyPath): \(TLSContext.drainErrors())")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw .tls("private key does not match certificate: \(TLSContext.drainErrors())")
            }
        case .client(let verifiesPeer, let trustedCertificatePaths, let usesSystemTrustStore):
            if verifiesPeer {
                SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
                for path in trustedCertificatePaths {
                    guard SSL_CTX_load_verify_locations(context, path, nil) == 1 else {
                        throw .tls("cannot load trusted certificates from \(path): \(TLSContext.drainErrors())")
                    }
                }
                if usesSystemTrustStore, SSL_CTX_set_default_verify_paths(context) != 1 {
                    throw .tls("cannot load the system trust store: \(TLSContext.drainErrors())")
                }
            } else {
                SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
            }
        }
    }

    deinit { SSL_CTX_free(context) }

    /// Empties OpenSSL's thread-local error queue into one message.
    static func drainErrors() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            messages.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "unknown error" : messages.joined(separator: "; ")
    }
}
