// A throwaway certificate authority and a server certificate it signed, for 127.0.0.1 and
// localhost, made with the openssl command line: wss:// is tested the way it is deployed (a
// chain checked against a CA, and the name checked), never with verification turned off.
import Foundation

struct TestCertificateAuthority {
    let directory: URL
    var caPath: String { directory.appendingPathComponent("ca.pem").path }
    var certificatePath: String { directory.appendingPathComponent("server.pem").path }
    var keyPath: String { directory.appendingPathComponent("server.key").path }

    struct Failure: Error, CustomStringConvertible { var description: String }

    init(in parent: URL) throws {
        directory = parent.appendingPathComponent("tls")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let extensions = directory.appendingPathComponent("server.ext")
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n".write(to: extensions, atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try Self.openssl(["req", "-x509"] + curve + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "1",
                         "-subj", "/CN=Bangbang Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                         "-addext", "keyUsage=critical,keyCertSign"], in: directory)
        try Self.openssl(["req"] + curve + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"], in: directory)
        try Self.openssl(["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                          "-out", "server.pem", "-days", "1", "-extfile", "server.ext"], in: directory)
    }

    func remove() { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }

    private static func openssl(_ arguments: [String], in directory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.first ?? "") failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}
