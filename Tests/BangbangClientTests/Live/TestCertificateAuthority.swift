// A throwaway certificate authority and a server certificate it signed, for 127.0.0.1 and
// localhost, made with the openssl command line: wss:// is tested the way it is deployed (a
// chain checked against a CA, and the name checked), never with verification turned off.
import Foundation
import TestSupport

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
        let folder = directory
        let file = { (name: String) in folder.appendingPathComponent(name).path }
        try Self.openssl(["req", "-x509"] + curve + ["-keyout", file("ca.key"), "-out", file("ca.pem"), "-days", "1",
                         "-subj", "/CN=Bangbang Test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                         "-addext", "keyUsage=critical,keyCertSign"])
        try Self.openssl(["req"] + curve + ["-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=localhost"])
        try Self.openssl(["x509", "-req", "-in", file("server.csr"), "-CA", file("ca.pem"), "-CAkey", file("ca.key"),
                          "-CAcreateserial", "-out", file("server.pem"), "-days", "1", "-extfile", file("server.ext")])
    }

    func remove() { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }

    private static func openssl(_ arguments: [String]) throws {
        let openssl = try ChildProcess.run("/usr/bin/openssl", arguments)
        guard openssl.status == 0 else {
            throw Failure(description: "openssl \(arguments.first ?? "") failed: \(openssl.output)")
        }
    }
}
