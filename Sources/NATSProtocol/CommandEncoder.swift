// The client → server commands, written straight into an output buffer: CONNECT, PUB, HPUB,
// SUB, UNSUB, PING, PONG (https://docs.nats.io/reference/reference-protocols/nats-protocol).
//
// Every command appends to a caller-owned `[UInt8]`, so a connection can gather many commands
// into one buffer and one write, with no allocation per command once the buffer has grown.

/// What the client says about itself in CONNECT.
public struct ConnectOptions: Sendable, Hashable {
    /// Shown in the server's monitoring (`connz`).
    public var name: String
    /// Ask for `+OK` after every command. Off: errors still arrive as `-ERR`.
    public var isVerbose = false
    public var user: String?
    public var password: String?
    public var token: String?
    /// Messages with headers (HMSG/HPUB); JetStream needs them.
    public var supportsHeaders = true
    /// A request nobody listens to is answered at once with status 503 instead of timing out.
    public var wantsNoResponders = true
    /// Receive the messages one publishes oneself on subjects one subscribes to.
    public var echo = true

    public init(name: String) {
        self.name = name
    }
}

public enum CommandEncoder {
    /// `CONNECT {json}\r\n`.
    public static func connect(_ options: ConnectOptions, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "CONNECT {\"verbose\":".utf8)
        bytes.append(contentsOf: (options.isVerbose ? "true" : "false").utf8)
        bytes.append(contentsOf: ",\"pedantic\":false,\"tls_required\":false,\"lang\":\"swift\",\"version\":\"1.0.0\",\"protocol\":1".utf8)
        bytes.append(contentsOf: ",\"headers\":".utf8)
        bytes.append(contentsOf: (options.supportsHeaders ? "true" : "false").utf8)
        bytes.append(contentsOf: ",\"no_responders\":".utf8)
        bytes.append(contentsOf: (options.wantsNoResponders && options.supportsHeaders ? "true" : "false").utf8)
        bytes.append(contentsOf: ",\"echo\":".utf8)
        bytes.append(contentsOf: (options.echo ? "true" : "false").utf8)
        appendJSONMember("name", options.name, into: &bytes)
        if let user = options.user { appendJSONMember("user", user, into: &bytes) }
        if let password = options.password { appendJSONMember("pass", password, into: &bytes) }
        if let token = options.token { appendJSONMember("auth_token", token, into: &bytes) }
        bytes.append(contentsOf: "}\r\n".utf8)
    }

    /// `PUB <subject> [reply-to] <#bytes>\r\n<payload>\r\n`.
    public static func publish(subject: String, replyTo: String? = nil, payload: UnsafeRawBufferPointer,
                               into bytes: inout [UInt8]) throws(CommandError) {
        try check(subject: subject, replyTo: replyTo)
        bytes.append(contentsOf: "PUB ".utf8)
        bytes.append(contentsOf: subject.utf8)
        if let replyTo {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: replyTo.utf8)
        }
        bytes.append(UInt8(ascii: " "))
        appendDecimal(payload.count, into: &bytes)
        bytes.append(contentsOf: [0x0D, 0x0A])
        bytes.append(contentsOf: payload)
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    /// `HPUB <subject> [reply-to] <#header bytes> <#total bytes>\r\n<headers><payload>\r\n`.
    public static func publish(subject: String, replyTo: String? = nil, headers: NATSHeaders,
                               payload: UnsafeRawBufferPointer, into bytes: inout [UInt8]) throws(CommandError) {
        try check(subject: subject, replyTo: replyTo)
        let block = try headers.encoded()
        bytes.append(contentsOf: "HPUB ".utf8)
        bytes.append(contentsOf: subject.utf8)
        if let replyTo {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: replyTo.utf8)
        }
        bytes.append(UInt8(ascii: " "))
        appendDecimal(block.count, into: &bytes)
        bytes.append(UInt8(ascii: " "))
        appendDecimal(block.count + payload.count, into: &bytes)
        bytes.append(contentsOf: [0x0D, 0x0A])
        bytes.append(contentsOf: block)
        bytes.append(contentsOf: payload)
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    /// `PUB` of an array's bytes.
    public static func publish(subject: String, replyTo: String? = nil, payload: [UInt8],
                               into bytes: inout [UInt8]) throws(CommandError) {
        let outcome = payload.withUnsafeBytes { buffer in
            Result { () throws(CommandError) in try publish(subject: subject, replyTo: replyTo, payload: buffer, into: &bytes) }
        }
        try outcome.get()
    }

    /// `HPUB` of an array's bytes.
    public static func publish(subject: String, replyTo: String? = nil, headers: NATSHeaders, payload: [UInt8],
                               into bytes: inout [UInt8]) throws(CommandError) {
        let outcome = payload.withUnsafeBytes { buffer in
            Result { () throws(CommandError) in
                try publish(subject: subject, replyTo: replyTo, headers: headers, payload: buffer, into: &bytes)
            }
        }
        try outcome.get()
    }

    /// `SUB <subject> [queue group] <sid>\r\n`.
    public static func subscribe(subject: String, queueGroup: String? = nil, subscriptionID: UInt64,
                                 into bytes: inout [UInt8]) throws(CommandError) {
        guard Subject.isValidForSubscribe(subject) else { throw .invalidSubject(subject) }
        if let queueGroup, !Subject.isValidQueueGroup(queueGroup) { throw .invalidQueueGroup(queueGroup) }
        bytes.append(contentsOf: "SUB ".utf8)
        bytes.append(contentsOf: subject.utf8)
        if let queueGroup {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: queueGroup.utf8)
        }
        bytes.append(UInt8(ascii: " "))
        appendDecimal(Int(subscriptionID), into: &bytes)
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    /// `UNSUB <sid> [max messages]\r\n`: with `afterMessages`, the server ends the subscription
    /// once it has delivered that many in total.
    public static func unsubscribe(subscriptionID: UInt64, afterMessages: Int? = nil, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "UNSUB ".utf8)
        appendDecimal(Int(subscriptionID), into: &bytes)
        if let afterMessages {
            precondition(afterMessages > 0, "UNSUB's message count must be positive")
            bytes.append(UInt8(ascii: " "))
            appendDecimal(afterMessages, into: &bytes)
        }
        bytes.append(contentsOf: [0x0D, 0x0A])
    }

    public static func ping(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "PING\r\n".utf8)
    }

    public static func pong(into bytes: inout [UInt8]) {
        bytes.append(contentsOf: "PONG\r\n".utf8)
    }

    // MARK: Pieces

    private static func check(subject: String, replyTo: String?) throws(CommandError) {
        guard Subject.isValidForPublish(subject) else { throw .invalidSubject(subject) }
        if let replyTo, !Subject.isValidForPublish(replyTo) { throw .invalidSubject(replyTo) }
    }

    /// Decimal digits without going through `String`.
    static func appendDecimal(_ value: Int, into bytes: inout [UInt8]) {
        precondition(value >= 0, "sizes and ids are never negative")
        if value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        var remaining = value
        withUnsafeMutableBytes(of: &digits) { scratch in
            while remaining > 0 {
                scratch[count] = UInt8(ascii: "0") + UInt8(remaining % 10)
                remaining /= 10
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { bytes.append(scratch[index]) }
        }
    }

    /// `,"key":"value"` with the value escaped as a JSON string (RFC 8259 §7).
    private static func appendJSONMember(_ key: StaticString, _ value: String, into bytes: inout [UInt8]) {
        bytes.append(contentsOf: ",\"".utf8)
        bytes.append(contentsOf: UnsafeRawBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        bytes.append(contentsOf: "\":\"".utf8)
        let hex = Array("0123456789abcdef".utf8)
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(byte)
            case 0..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
