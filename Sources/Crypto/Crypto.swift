// Crypto: the only Swift module that calls into OpenSSL's libcrypto and zlib's checksums.
//
// It owns digests (SHA-1 for the WebSocket accept key, SHA-256), HMAC-SHA256 for session
// tokens, slow password hashing (scrypt), secure random bytes and CRC-32 for self-checking
// files. Everything else in the package calls these instead of touching C, so the C surface
// stays in one place and is tested once.
import COpenSSL
import CZlib

public enum Digest {
    /// SHA-1, used only where a protocol demands it (RFC 6455 §4.2.2 accept key).
    public static func sha1(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
        let input = Array(bytes)
        input.withUnsafeBufferPointer { buffer in
            _ = SHA1(buffer.baseAddress, buffer.count, &output)
        }
        return output
    }

    public static func sha256(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        let input = Array(bytes)
        input.withUnsafeBufferPointer { buffer in
            _ = SHA256(buffer.baseAddress, buffer.count, &output)
        }
        return output
    }

    /// HMAC-SHA256 of `message` under `key`.
    public static func hmacSHA256(key: some Collection<UInt8>, message: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let keyBytes = Array(key)
        let messageBytes = Array(message)
        keyBytes.withUnsafeBufferPointer { keyBuffer in
            messageBytes.withUnsafeBufferPointer { messageBuffer in
                _ = HMAC(EVP_sha256(), keyBuffer.baseAddress, Int32(keyBuffer.count),
                         messageBuffer.baseAddress, messageBuffer.count, &output, &length)
            }
        }
        return Array(output.prefix(Int(length)))
    }

    /// CRC-32 (the zlib / IEEE polynomial), continued from `initial`.
    public static func crc32(_ bytes: UnsafeRawBufferPointer, initial: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return initial }
        var crc = UInt(initial)
        var offset = 0
        while offset < bytes.count {
            let chunk = min(bytes.count - offset, Int(UInt32.max))
            crc = CZlib.crc32(crc, base.advanced(by: offset).assumingMemoryBound(to: Bytef.self), uInt(chunk))
            offset += chunk
        }
        return UInt32(truncatingIfNeeded: crc)
    }

    public static func crc32(_ bytes: [UInt8], initial: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32($0, initial: initial) }
    }

    /// Compares in time that depends only on the lengths, for secrets and MACs.
    public static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in lhs.indices { difference |= lhs[index] ^ rhs[index] }
        return difference == 0
    }
}

public enum SecureRandom {
    /// Bytes from OpenSSL's CSPRNG. A failure here means the process cannot be trusted to
    /// make secrets at all, so it is a broken invariant, not an error to handle.
    public static func bytes(count: Int) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return output }
        let status = output.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard status == 1 else { fatalError("internal inconsistency in SecureRandom: RAND_bytes failed") }
        return output
    }
}

/// A `RandomNumberGenerator` over OpenSSL's CSPRNG, for code that takes `inout some RandomNumberGenerator`.
public struct SecureRandomNumberGenerator: RandomNumberGenerator, Sendable {
    public init() {}
    public mutating func next() -> UInt64 {
        let bytes = SecureRandom.bytes(count: 8)
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
}
