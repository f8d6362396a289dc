// What a client reads of a certificate file it trusts: the name to check the peer against (a
// DNS name, else the CN of a certificate without one, else an IP address) and its expiry.
import Foundation
import Testing
@testable import SocketServer

@Suite struct CertificateFileTests {
    /// A self-signed certificate made by the openssl command line with `extra` arguments.
    private func certificate(_ extra: [String]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bangbang-cert-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("cert.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                             "-keyout", directory.appendingPathComponent("key.pem").path, "-out", path, "-days", "3"] + extra
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw SocketError.tls("openssl req failed") }
        return path
    }

    @Test func aCertificateWithACommonNameAndNoSubjectAltNameIsCheckedAgainstItsCommonName() throws {
        let path = try certificate(["-subj", "/CN=localhost"])
        #expect(try TLSCertificateFile.hostName(ofCertificateAt: path) == nil)
        #expect(try TLSCertificateFile.peerName(ofCertificateAt: path) == "localhost")
    }

    @Test func aDNSNameWinsOverTheCommonNameAndAnAddressIsTheLastResort() throws {
        let named = try certificate(["-subj", "/CN=ignored.example", "-addext", "subjectAltName=DNS:bangbang.example.edu,IP:127.0.0.1"])
        #expect(try TLSCertificateFile.peerName(ofCertificateAt: named) == "bangbang.example.edu")
        let address = try certificate(["-subj", "/O=Campus", "-addext", "subjectAltName=IP:10.1.2.3"])
        #expect(try TLSCertificateFile.peerName(ofCertificateAt: address) == "10.1.2.3")
        #expect(throws: SocketError.self) { try TLSCertificateFile.peerName(ofCertificateAt: "/nonexistent.pem") }
    }

    @Test func theExpiryIsTheNotAfterInSecondsSinceTheEpoch() throws {
        let path = try certificate(["-subj", "/CN=localhost"])
        let expiry = try TLSCertificateFile.expiry(ofCertificateAt: path)
        let inThreeDays = Int64(Date().timeIntervalSince1970) + 3 * 86_400
        #expect(abs(expiry - inThreeDays) < 120, "\(expiry) against \(inThreeDays)")
        #expect(throws: SocketError.self) { try TLSCertificateFile.expiry(ofCertificateAt: "/nonexistent.pem") }
    }
}
