// A blocking WebSocket client for `bangbang admin`: one plain socket, the sans-I/O
// `ClientHandshake` and `WebSocketConnection(role: .client)` on top. A command-line tool sends a
// few requests and waits for each reply, so blocking reads with a timeout are the simplest
// correct shape; no event loop is needed. ws:// only: the admin secret is accepted over
// loopback alone, where TLS adds nothing.
import BangbangProtocol
import Foundation
import WebSocketProtocol

struct AdminClientError: Error, CustomStringConvertible {
    var description: String
}

final class AdminClient {
    private let descriptor: Int32
    private let socket: WebSocketConnection
    private var output = WebSocketOutput()
    /// Text messages received and not yet read.
    private var inbox: [[UInt8]] = []
    private var nextID: Int64 = 1

    /// Connects to `url` (ws://HOST:PORT/PATH) and completes the opening handshake.
    init(url: String, timeoutSeconds: Int = 10) throws(AdminClientError) {
        let (host, port, path) = try Self.split(url)
        descriptor = try Self.connect(host: host, port: port, timeoutSeconds: timeoutSeconds)
        var random = SystemRandomNumberGenerator()
        var handshake = ClientHandshake(host: port == 80 ? host : "\(host):\(port)", path: path,
                                        subprotocols: ["bangbang.v1"], using: &random)
        socket = WebSocketConnection(role: .client, configuration: WebSocketConfiguration(maxFrameSize: 16 << 20,
                                                                                         maxMessageSize: 16 << 20))
        do throws(AdminClientError) {
            try writeAll(handshake.requestBytes)
            while true {
                let bytes = try readSome()
                let progress: ClientHandshake.Progress
                do { progress = try handshake.receive(bytes) } catch {
                    throw AdminClientError(description: "the server refused the WebSocket handshake: \(error)")
                }
                if case .established(let result) = progress {
                    if !result.unconsumedBytes.isEmpty { try receive(result.unconsumedBytes) }
                    break
                }
            }
        } catch {
            close(descriptor)
            throw error
        }
    }

    deinit {
        if socket.isOpen {
            socket.close(code: .normalClosure, reason: "done", into: &output)
            try? writeAll(output.takeOutbound())
        }
        close(descriptor)
    }

    /// Sends one request and waits for its reply; events in between are skipped.
    func call(_ operation: String, _ data: JSONValue) throws(AdminClientError) -> Result<JSONValue, AdminReplyError> {
        let id = nextID
        nextID += 1
        let request: JSONValue = ["id": .integer(id), "op": .string(operation), "data": data]
        _ = JSONWriter.encode(request).withUnsafeBytes { socket.send(textBytes: $0, into: &output) }
        try writeAll(output.takeOutbound())
        output.removeAll()
        while true {
            while !inbox.isEmpty {
                let message: JSONValue
                do { message = try JSONParser.parse(inbox.removeFirst()) } catch {
                    throw AdminClientError(description: "the server sent a message that is not JSON: \(error)")
                }
                guard message["id"] == .integer(id) else { continue }
                if message["ok"] == .bool(true) { return .success(message["data"] ?? [:]) }
                let error = message["error"]
                let code = if case .string(let text)? = error?["code"] { text } else { "unknown" }
                let text = if case .string(let text)? = error?["message"] { text } else { "" }
                return .failure(AdminReplyError(code: code, message: text))
            }
            guard socket.isOpen else { throw AdminClientError(description: "the server closed the connection") }
            try receive(try readSome())
        }
    }

    private func receive(_ bytes: [UInt8]) throws(AdminClientError) {
        socket.receive(bytes, into: &output)
        for event in output.events {
            switch event {
            case .text(let message): inbox.append(message)
            case .closed(let code, let reason, _):
                if inbox.isEmpty {
                    throw AdminClientError(description: "the server closed the connection (\(code.rawValue) \(reason))")
                }
            default: break
            }
        }
        let pending = output.takeOutbound()
        output.removeAll()
        try writeAll(pending)
    }

    // MARK: Socket

    private func writeAll(_ bytes: [UInt8]) throws(AdminClientError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw AdminClientError(description: "write failed: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    private func readSome() throws(AdminClientError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(buffer[..<count]) }
            if count == 0 { throw AdminClientError(description: "the server closed the connection") }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw AdminClientError(description: "the server did not answer in time") }
            throw AdminClientError(description: "read failed: \(String(cString: strerror(errno)))")
        }
    }

    static func split(_ url: String) throws(AdminClientError) -> (host: String, port: Int, path: String) {
        guard url.hasPrefix("ws://") else {
            throw AdminClientError(description: "--url must be ws://HOST:PORT/PATH (the admin secret is for loopback only)")
        }
        let rest = url.dropFirst("ws://".count)
        let authority = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(authority.count)
        var host = String(authority)
        var port = 80
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") { port = Int(after.dropFirst()) ?? -1 }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            port = Int(host[host.index(after: colon)...]) ?? -1
            host = String(host[..<colon])
        }
        guard !host.isEmpty, (1...65535).contains(port) else { throw AdminClientError(description: "bad --url '\(url)'") }
        return (host, port, path.isEmpty ? "/" : String(path))
    }

    private static func connect(host: String, port: Int, timeoutSeconds: Int) throws(AdminClientError) -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            throw AdminClientError(description: "cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let descriptor = Glibc.socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw AdminClientError(description: "socket: \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard Glibc.connect(descriptor, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw AdminClientError(description: "cannot connect to \(host):\(port): \(reason)")
        }
        return descriptor
    }
}

/// A refusal from the server (or from the offline run), with the protocol's error code.
struct AdminReplyError: Error, Sendable, Equatable {
    var code: String
    var message: String
}
