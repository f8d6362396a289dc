// IPv4/IPv6 socket addresses, kept as their compact C structs (16 or 28 bytes, not the
// 128-byte sockaddr_storage) because one is stored per connection.
import Forwarding
import Glibc
import Platform

/// An IPv4 or IPv6 address and port.
public enum SocketAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    init(storage: sockaddr_storage) {
        var storage = storage
        if Int32(storage.ss_family) == AF_INET6 {
            self = .v6(withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) })
        } else {
            self = .v4(withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) })
        }
    }

    /// Resolves `host` (a numeric address or a name such as `localhost`) to every address it
    /// names, IPv4 first only if the resolver orders it so.
    public static func resolve(host: String, port: Int) throws(SocketError) -> [SocketAddress] {
        precondition((0...65535).contains(port), "port out of range: \(port)")
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        if rc != 0 && (host == "::1" || host == "::") {
            // AI_ADDRCONFIG hides IPv6 on hosts whose only IPv6 address is loopback.
            hints.ai_flags = AI_NUMERICSERV
            guard getaddrinfo(host, String(port), &hints, &list) == 0 else {
                throw .addressResolution(host: host)
            }
        } else if rc != 0 {
            throw .addressResolution(host: host)
        }
        defer { freeaddrinfo(list) }
        var result: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr {
                switch entry.pointee.ai_family {
                case AF_INET:
                    let address = SocketAddress.v4(UnsafeRawPointer(raw).load(as: sockaddr_in.self))
                    if !result.contains(address) { result.append(address) }
                case AF_INET6:
                    let address = SocketAddress.v6(UnsafeRawPointer(raw).load(as: sockaddr_in6.self))
                    if !result.contains(address) { result.append(address) }
                default:
                    break
                }
            }
            cursor = entry.pointee.ai_next
        }
        if result.isEmpty { throw .addressResolution(host: host) }
        return result
    }

    var family: Int32 {
        switch self {
        case .v4: AF_INET
        case .v6: AF_INET6
        }
    }

    public var port: Int {
        switch self {
        case .v4(let address): Int(UInt16(bigEndian: address.sin_port))
        case .v6(let address): Int(UInt16(bigEndian: address.sin6_port))
        }
    }

    /// The address without the port, e.g. `127.0.0.1` or `::1`.
    public var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        switch self {
        case .v4(var address):
            _ = inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
        case .v6(var address):
            _ = inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
        }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address without the port, as a value (the form trust and limits compare).
    public var ipAddress: IPAddress {
        switch self {
        case .v4(let address):
            return IPAddress(ipv4: UInt32(bigEndian: address.sin_addr.s_addr))
        case .v6(var address):
            return withUnsafeBytes(of: &address.sin6_addr) { IPAddress(networkBytes: $0) }
        }
    }

    public var description: String {
        switch self {
        case .v4: "\(host):\(port)"
        case .v6: "[\(host)]:\(port)"
        }
    }

    func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch self {
        case .v4(var address):
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(var address):
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.family == rhs.family && lhs.port == rhs.port && lhs.host == rhs.host
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(family)
        hasher.combine(port)
        hasher.combine(host)
    }
}

/// Failures the transport reports to its caller (not to a connection's handler).
public enum SocketError: Error, Sendable, Equatable {
    case addressResolution(host: String)
    case system(call: String, Errno)
    case tls(String)
}

/// A peer's address as a connection keeps it: 19 bytes instead of the 29 of a `SocketAddress`
/// holding a `sockaddr_in6`. The IPv6 flow label and scope id are not kept: nothing reads them
/// of a peer's address (its text, its `IPAddress` and its equality ignore them).
struct PeerAddress: Sendable {
    /// The address's bytes in network order: all sixteen for IPv6, the first four for IPv4.
    private let high: UInt64
    private let low: UInt64
    /// In host order.
    private let port: UInt16
    private let isIPv6: Bool

    init(_ address: SocketAddress) {
        switch address {
        case .v4(var address):
            high = withUnsafeBytes(of: &address.sin_addr) { UInt64($0.loadUnaligned(as: UInt32.self)) }
            low = 0
            port = UInt16(bigEndian: address.sin_port)
            isIPv6 = false
        case .v6(var address):
            (high, low) = withUnsafeBytes(of: &address.sin6_addr) {
                ($0.loadUnaligned(fromByteOffset: 0, as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            }
            port = UInt16(bigEndian: address.sin6_port)
            isIPv6 = true
        }
    }

    var socketAddress: SocketAddress {
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) {
                $0.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
                $0.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            return .v6(address)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        withUnsafeMutableBytes(of: &address.sin_addr) { $0.storeBytes(of: UInt32(truncatingIfNeeded: high), as: UInt32.self) }
        return .v4(address)
    }
}
