// One connection's TLS state: an SSL object between two memory BIOs.
//
// The connection reads ciphertext from the socket into the loop buffer and pushes it into the
// read BIO; OpenSSL decrypts into the caller's buffer. Plaintext to send goes through
// SSL_write, and the ciphertext collected from the write BIO is queued like any other output.
// OpenSSL never touches the descriptor, so the socket stays under the loop's control.
import COpenSSL

/// TLS state of one connection. Confined to the connection's loop.
final class TLSSession {
    enum HandshakeProgress {
        case complete
        case needsMoreInput
        case failed(String)
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

    init(context: TLSContext, serverName: String?) throws(SocketError) {
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
            return .failed(TLSContext.drainErrors())
        }
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
