// What a client needs to know about a server's own certificate file: the name to check it
// against when the server is reached by a loopback address (the admin CLI on the server's
// machine, with the server's configuration in hand).
import COpenSSL

public enum TLSCertificateFile {
    /// The first DNS name (never a wildcard) the first certificate in the PEM file at `path` is
    /// issued for, or nil when it names none (a certificate for addresses only).
    public static func hostName(ofCertificateAt path: String) throws(SocketError) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let found = bangbang_certificate_file_dns_name(path, &buffer, Int32(buffer.count))
        guard found >= 0 else { throw .tls("cannot read a certificate from \(path): \(TLSContext.drainErrors())") }
        guard found == 1 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The name to check a peer against that presents the certificate of the PEM file at
    /// `path`, for a client that trusts exactly that file (the admin CLI on the server's own
    /// machine): the first DNS subjectAltName; for a certificate with none, its subject CN (the
    /// most common self-signed certificate, `openssl req -x509 -subj /CN=localhost`, has only
    /// that); else its first IP address. Nil when it names nothing. The chain is still verified
    /// against the trusted file, so only the holder of that certificate's key passes.
    public static func peerName(ofCertificateAt path: String) throws(SocketError) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let found = bangbang_certificate_file_peer_name(path, &buffer, Int32(buffer.count))
        guard found >= 0 else { throw .tls("cannot read a certificate from \(path): \(TLSContext.drainErrors())") }
        guard found == 1 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// When the first certificate in the PEM file at `path` expires (its notAfter), in seconds
    /// since the epoch.
    public static func expiry(ofCertificateAt path: String) throws(SocketError) -> Int64 {
        var seconds: Int64 = 0
        guard bangbang_certificate_file_not_after(path, &seconds) == 1 else {
            throw .tls("cannot read a certificate from \(path): \(TLSContext.drainErrors())")
        }
        return seconds
    }
}
