// One connection's TLS state: an SSL object between two memory BIOs.
//
// The connection reads ciphertext from the socket into the loop buffer and pushes it into the
// read BIO; OpenSSL decrypts into the caller's buffer. Plaintext to send goes through
// SSL_write, and the ciphertext collected from the write BIO is queued like any other output.
// OpenSSL never touches the descriptor, so the socket stays under the loop's control.
import COpenSSL
import Glibc

/// TLS state of one connection. Confined to the connection's loop.
final class TLSSession {
    enum HandshakeProgress {
        case complete
        case needsMoreInput
        case failed(TLSFailure)
    }

    enum ReadOutcome {
        case plaintext(Int)
        case needsMoreInput
        case closedByPeer
        case failed(String)
    }

    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    /// - Parameters:
    ///   - serverName: for a client, the name sent in SNI (a host name, never a literal address).
    ///   - expectedPeerName: for a verifying client, the host name or IP address the server's
    ///     certificate must name (RFC 6125); the chain alone would accept any certificate the CA
    ///     ever issued.
    init(context: TLSContext, serverName: String?, expectedPeerName: String? = nil) throws(SocketError) {
        guard let ssl = SSL_new(context.context) else { throw .tls("SSL_new: \(TLSContext.drainErrors())") }
        guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .tls("BIO_new failed")
        }
        // An empty memory BIO must read as "retry later", not as end of stream.
        _ = BIO_ctrl(input, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        _ = BIO_ctrl(output, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, input, output)  // the SSL object now owns both BIOs
        self.ssl = ssl
        self.input = input
        self.output = output
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if let serverName { _ = bangbang_SSL_set_tlsext_host_name(ssl, serverName) }
            if context.verifiesPeer, let expectedPeerName {
                let isSet = if TLSSession.isIPAddress(expectedPeerName) {
                    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), expectedPeerName)
                } else {
                    SSL_set1_host(ssl, expectedPeerName)
                }
                guard isSet == 1 else {
                    SSL_free(ssl)
                    throw .tls("cannot check certificates against '\(expectedPeerName)': \(TLSContext.drainErrors())")
                }
            }
        }
    }

    deinit { SSL_free(ssl) }

    /// Hands received ciphertext to OpenSSL.
    func receive(ciphertext: UnsafeRawBufferPointer) {
        guard let base = ciphertext.baseAddress, ciphertext.count > 0 else { return }
        // A memory BIO grows as needed, so the write is complete or the process is out of memory.
        let written = BIO_write(input, base, Int32(ciphertext.count))
        if written != Int32(ciphertext.count) { fatalError("internal inconsistency in TLSSession: BIO_write short") }
    }

    func advanceHandshake() -> HandshakeProgress {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .complete }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .needsMoreInput
        default:
            return .failed(classifyHandshakeFailure())
        }
    }

    /// Names what went wrong from OpenSSL's error queue (emptying it) and the verify result.
    private func classifyHandshakeFailure() -> TLSFailure {
        let reason = ERR_GET_REASON(ERR_peek_error())
        var message = TLSContext.drainErrors()
        let verification = SSL_get_verify_result(ssl)
        if verification != X509_V_OK, let text = X509_verify_cert_error_string(verification) {
            message += " (\(String(cString: text)))"
        }
        // The peer offered only versions below our minimum (RFC 8446 §4.2.1: protocol_version
        // alert), or refused ours with that alert.
        let isVersion = [SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_VERSION_TOO_LOW, SSL_R_NO_PROTOCOLS_AVAILABLE,
                         SSL_R_TLSV1_ALERT_PROTOCOL_VERSION].contains(reason)
        return TLSFailure(kind: isVersion ? .unsupportedVersion : .handshake, message: message)
    }

    func readPlaintext(into buffer: UnsafeMutableRawBufferPointer) -> ReadOutcome {
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if count > 0 { return .plaintext(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return .needsMoreInput
        case SSL_ERROR_ZERO_RETURN:
            return .closedByPeer
        default:
            return .failed(TLSContext.drainErrors())
        }
    }

    /// Encrypts `plaintext`; the records appear in `takeCiphertext()`.
    func send(plaintext: [UInt8]) -> Bool {
        ERR_clear_error()
        let written = plaintext.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        return written == Int32(plaintext.count)
    }

    /// Queues a close_notify alert.
    func shutdown() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
    }

    private static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// Everything OpenSSL has produced for the wire since the last call, or nil.
    func takeCiphertext() -> [UInt8]? {
        let pending = Int(bangbang_BIO_pending(output))
        guard pending > 0 else { return nil }
        return [UInt8](unsafeUninitializedCapacity: pending) { buffer, initialized in
            let read = BIO_read(output, buffer.baseAddress, Int32(pending))
            initialized = max(0, Int(read))
        }
    }
}
