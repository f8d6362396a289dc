// The server secret that signs session tokens. It lives in the data directory (mode 0600) so
// tokens survive restarts, and is made on first start from the CSPRNG.
import Crypto
import Foundation

enum SecretFile {
    static let name = "session-secret"

    static func loadOrCreate(in directory: String) throws -> [UInt8] {
        if let secret = try load(in: directory) { return secret }
        let path = (directory as NSString).appendingPathComponent(name)
        let secret = SecureRandom.bytes(count: 32)
        let temporary = path + ".tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: Data(Base64.encode(secret).utf8),
                                             attributes: [.posixPermissions: 0o600]) else {
            throw ConfigurationError("cannot write \(temporary): check the data directory's permissions")
        }
        guard rename(temporary, path) == 0 else {
            throw ConfigurationError("cannot create \(path): \(String(cString: strerror(errno)))")
        }
        return secret
    }

    /// The directory's secret; nil when there is none.
    static func load(in directory: String) throws -> [UInt8]? {
        let path = (directory as NSString).appendingPathComponent(name)
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        guard let secret = Base64.decode(text.trimmingCharacters(in: .whitespacesAndNewlines)), secret.count >= 32 else {
            throw ConfigurationError("\(path) is not a valid session secret (32+ bytes, base64); "
                                     + "delete it to make a new one (every user will have to log in again)")
        }
        return secret
    }
}
