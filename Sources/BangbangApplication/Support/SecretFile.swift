// The server secret that signs session tokens. It lives in the data directory (mode 0600) so
// tokens survive restarts, and is made on first start from the CSPRNG. How a secret file is
// written (`PrivateFile`) is shared with the admin secret.
import Crypto
import Foundation
import Platform

/// A file only its owner may read, written whole: a temporary file of mode 0600, then renamed
/// over the target, so a reader never sees half a secret.
package enum PrivateFile {
    package static func write(_ contents: String, to path: String) throws(ConfigurationError) {
        let temporary = path + ".tmp"
        try? Syscalls.live.removeFile(temporary)
        guard FileManager.default.createFile(atPath: temporary, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("cannot write \(temporary): check the data directory's permissions")
        }
        do { try Syscalls.live.rename(temporary, to: path) } catch {
            throw ConfigurationError("cannot create \(path): \(error.reason)")
        }
    }
}

package enum SecretFile {
    package static let name = "session-secret"

    static func loadOrCreate(in directory: String) throws -> [UInt8] {
        if let secret = try load(in: directory) { return secret }
        let path = (directory as NSString).appendingPathComponent(name)
        let secret = SecureRandom.bytes(count: 32)
        try PrivateFile.write(Base64.encode(secret), to: path)
        return secret
    }

    /// The directory's secret; nil when there is none.
    package static func load(in directory: String) throws -> [UInt8]? {
        let path = (directory as NSString).appendingPathComponent(name)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        guard let secret = Base64.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)), secret.count >= 32 else {
            throw ConfigurationError("\(path) is not a valid session secret (32+ bytes, base64); "
                                     + "delete it to make a new one (every user will have to log in again)")
        }
        return secret
    }
}
