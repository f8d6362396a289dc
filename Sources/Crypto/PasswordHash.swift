// Password hashing with scrypt (RFC 7914) from OpenSSL.
//
// Stored form: "scrypt$N$r$p$salt-base64$hash-base64", so the cost can be raised later
// and old hashes still verify with the parameters they were made with.
import COpenSSL

public struct PasswordHasher: Sendable {
    /// scrypt cost parameters. The default (N=2^14, r=8, p=1) costs ~16 MiB and tens of
    /// milliseconds per hash: slow for an attacker, tolerable for a login. Tests lower it.
    public var costLog2: Int
    public var blockSize: Int
    public var parallelism: Int

    public init(costLog2: Int = 14, blockSize: Int = 8, parallelism: Int = 1) {
        precondition((1...20).contains(costLog2), "scrypt cost out of range")
        self.costLog2 = costLog2
        self.blockSize = blockSize
        self.parallelism = parallelism
    }

    public func hash(password: String, salt: [UInt8] = SecureRandom.bytes(count: 16)) -> String {
        let derived = Self.scrypt(password: Array(password.utf8), salt: salt,
                                  n: UInt64(1) << costLog2, r: UInt64(blockSize), p: UInt64(parallelism))
        return "scrypt$\(costLog2)$\(blockSize)$\(parallelism)$\(Base64.encode(salt))$\(Base64.encode(derived))"
    }

    /// True when `password` matches `stored`; false for a wrong password or a malformed record.
    public func verify(password: String, against stored: String) -> Bool {
        let parts = stored.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt",
              let costLog2 = Int(parts[1]), (1...20).contains(costLog2),
              let r = UInt64(parts[2]), (1...32).contains(r),
              let p = UInt64(parts[3]), (1...16).contains(p),
              let salt = Base64.decode(String(parts[4])),
              let expected = Base64.decode(String(parts[5])), !expected.isEmpty
        else { return false }
        let derived = Self.scrypt(password: Array(password.utf8), salt: salt,
                                  n: UInt64(1) << costLog2, r: r, p: p, length: expected.count)
        return Digest.constantTimeEquals(derived, expected)
    }

    private static func scrypt(password: [UInt8], salt: [UInt8], n: UInt64, r: UInt64, p: UInt64,
                               length: Int = 32) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: length)
        let maxMemory: UInt64 = 256 * 1024 * 1024
        let status = password.withUnsafeBufferPointer { pw in
            salt.withUnsafeBufferPointer { s in
                output.withUnsafeMutableBufferPointer { out in
                    pw.withMemoryRebound(to: CChar.self) { pwChars in
                        EVP_PBE_scrypt(pwChars.baseAddress, pw.count, s.baseAddress, s.count,
                                       n, r, p, maxMemory, out.baseAddress, length)
                    }
                }
            }
        }
        guard status == 1 else { fatalError("internal inconsistency in PasswordHasher: EVP_PBE_scrypt failed") }
        return output
    }
}
