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
}
