// The admin secret: 32 random bytes (hex) that the server writes to `<data-dir>/admin-secret`
// (mode 0600) at every start, and that `auth.admin_secret` accepts to log a connection in as
// the built-in administrator. Whoever can read the data directory already owns the server's
// state, so the file grants nothing new; a fresh secret per start means a copy taken earlier is
// worthless. It is compared in constant time, accepted only from a client on loopback
// (`ClientOrigin.isLoopback`: through a proxy, only when the real client is), and never logged.
import Crypto
import Foundation

package enum AdminSecret {
    package static let fileName = "admin-secret"

    package static func path(in dataDirectory: String) -> String {
        (dataDirectory as NSString).appendingPathComponent(fileName)
    }

    /// Makes a new secret and writes it (`PrivateFile`). Call after the data directory's lock is taken.
    @discardableResult
    package static func create(in dataDirectory: String) throws -> String {
        let secret = SecureRandom.bytes(count: 32).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
        try PrivateFile.write(secret + "\n", to: path(in: dataDirectory))
        return secret
    }

    /// The secret of the server that owns `dataDirectory`, or nil if there is none (never started).
    package static func read(from dataDirectory: String) -> String? {
        guard let text = try? String(contentsOfFile: path(in: dataDirectory), encoding: .utf8) else { return nil }
        let secret = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return secret.isEmpty ? nil : secret
    }

    /// Constant-time comparison: the time taken does not depend on where the first difference is.
    static func matches(_ candidate: String, _ secret: String) -> Bool {
        let left = Array(candidate.utf8), right = Array(secret.utf8)
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<right.count {
            difference |= right[index] ^ (index < left.count ? left[index] : 0)
        }
        return difference == 0 && left.count == right.count
    }
}
