// The incremental parser for what a NATS server sends.
//
// Theory of operation
// -------------------
// The server's half of the protocol is a sequence of CRLF-terminated control lines; `MSG` and
// `HMSG` lines announce a byte count, and exactly that many bytes plus CRLF follow. The parser
// has two states: reading a control line, and reading a message body whose size the line
// announced. Input arrives in arbitrary pieces; each byte is looked at once:
//   - A line is searched for its LF only in bytes not yet seen. When the whole line lies in the
//     current input it is parsed in place; only a line split across inputs is gathered in
//     `line`, a buffer that keeps its capacity.
//   - A body that lies whole in the current input is handed out in place, with no copy. Only a
//     body split across inputs is gathered in `body`.
// Limits apply as early as they can: a line is refused as soon as it passes the control-line
// limit (even before its LF arrives), a message as soon as its line announces too many bytes.
// A failure is final: the parser remembers it and throws it again on every later call, and the
// bytes after the failure are never looked at.
//
// Operation names are case-insensitive (the protocol says so); arguments are separated by runs
// of spaces or tabs. Subscription ids are the numbers this client chose, so a non-numeric sid is
// a protocol error rather than a string to carry around.
import Glibc

/// Parses server → client operations from bytes delivered in any chunking.
public struct OperationParser {
    private enum State {
        case line
        /// A `MSG`/`HMSG` whose body is still arriving. `head` indexes into `line`.
        case body(PendingHead, remaining: Int)
        case failed(NATSProtocolError)
    }

    /// Where the parts of a pending message's line lie in `line`, and the sizes it announced.
    private struct PendingHead {
        var subject: Range<Int>
        var replyTo: Range<Int>?
        var subscriptionID: UInt64
        var headerByteCount: Int?
        var totalByteCount: Int
    }

    public var limits: ParserLimits
    private var state = State.line
    private var line: [UInt8] = []
    private var body: [UInt8] = []

    /// A body buffer that grew past this is released after use, so one large message does not
    /// pin its size for the connection's life. 1 MiB, nats-server's default `max_payload`.
    private static let retainedBodyCapacity = 1024 * 1024

    public init(limits: ParserLimits = ParserLimits()) {
        self.limits = limits
    }

    /// True when the parser is between operations (nothing partial is buffered).
    public var isAtOperationBoundary: Bool {
        if case .line = state { return line.isEmpty }
        return false
    }

    /// Consumes `input` and calls `emit` for every operation completed by it, in order.
    public mutating func parse(_ input: UnsafeRawBufferPointer,
                               _ emit: (ServerOperation) -> Void) throws(NATSProtocolError) {
        var index = 0
        while index < input.count {
            switch state {
            case .failed(let error):
                throw error
            case .line:
                do {
                    index = try consumeLine(input, from: index, emit)
                } catch {
                    state = .failed(error)
                    throw error
                }
            case .body(let head, let remaining):
                let taken = min(remaining, input.count - index)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[index..<(index + taken)]))
                index += taken
                if taken < remaining {
                    state = .body(head, remaining: remaining - taken)
                    return
                }
                do {
                    try emitPendingBody(head, emit)
                } catch {
                    state = .failed(error)
                    throw error
                }
            }
        }
        if case .failed(let error) = state { throw error }
    }

    // MARK: Lines

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// What a complete line asks for next.
    private enum LineOutcome {
        /// The operation was emitted.
        case done
        /// A message line: its body follows.
        case message(PendingHead)
    }

    /// Consumes up to and including one LF, or everything if none comes; returns the new index.
    private mutating func consumeLine(_ input: UnsafeRawBufferPointer, from start: Int,
                                      _ emit: (ServerOperation) -> Void) throws(NATSProtocolError) -> Int {
        let available = input.count - start
        let base = input.baseAddress! + start
        guard let found = memchr(base, Int32(Self.lineFeed), available) else {
            guard line.count + available <= limits.maxControlLineBytes else {
                throw .controlLineTooLong(limit: limits.maxControlLineBytes)
            }
            line.append(contentsOf: UnsafeRawBufferPointer(start: base, count: available))
            return input.count
        }
        let lineEnd = start + (UnsafeRawPointer(found) - UnsafeRawPointer(base))
        let next = lineEnd + 1
        guard line.count + (next - start) <= limits.maxControlLineBytes else {
            throw .controlLineTooLong(limit: limits.maxControlLineBytes)
        }
        let limits = self.limits
        if line.isEmpty {
            let text = UnsafeRawBufferPointer(rebasing: input[start..<lineEnd])
            guard case .message(let head) = try Self.handleLine(text, limits: limits, emit) else { return next }
            let needed = head.totalByteCount + 2
            if input.count - next >= needed {
                // The common case: line and body are both in this input; hand them out in place.
                try Self.emitMessage(head, line: text, body: UnsafeRawBufferPointer(rebasing: input[next..<(next + needed)]), emit)
                return next + needed
            }
            line.append(contentsOf: text)
            return startBody(head, input: input, from: next)
        }
        line.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[start..<lineEnd]))
        let outcome = try line.withBytes { (text) throws(NATSProtocolError) -> LineOutcome in
            try Self.handleLine(text, limits: limits, emit)
        }
        guard case .message(let head) = outcome else {
            line.removeAll(keepingCapacity: true)
            return next
        }
        let needed = head.totalByteCount + 2
        if input.count - next >= needed {
            try line.withBytes { (text) throws(NATSProtocolError) in
                try Self.emitMessage(head, line: text, body: UnsafeRawBufferPointer(rebasing: input[next..<(next + needed)]), emit)
            }
            line.removeAll(keepingCapacity: true)
            return next + needed
        }
        return startBody(head, input: input, from: next)
    }

    /// Keeps the line (already in `line`) and what has arrived of the body.
    private mutating func startBody(_ head: PendingHead, input: UnsafeRawBufferPointer, from next: Int) -> Int {
        body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[next...]))
        state = .body(head, remaining: head.totalByteCount + 2 - (input.count - next))
        return input.count
    }

    /// Parses one complete line (without its LF), emitting it unless it is a message line.
    private static func handleLine(_ text: UnsafeRawBufferPointer, limits: ParserLimits,
                                   _ emit: (ServerOperation) -> Void) throws(NATSProtocolError) -> LineOutcome {
        guard let last = text.last, last == carriageReturn else { throw .missingLineTerminator }
        let content = UnsafeRawBufferPointer(rebasing: text[..<(text.count - 1)])
        let nameEnd = content.firstIndex(where: isSpace) ?? content.count
        let name = UnsafeRawBufferPointer(rebasing: content[..<nameEnd])
        let rest = UnsafeRawBufferPointer(rebasing: content[nameEnd...])
        let operation = OperationName(name)
        switch operation {
        case .message, .headerMessage:
            return .message(try parseMessageArguments(rest, offset: nameEnd, isHeaderMessage: operation == .headerMessage,
                                                      limits: limits))
        case .ping:
            try requireEmpty(rest, operation: "PING")
            emit(.ping)
        case .pong:
            try requireEmpty(rest, operation: "PONG")
            emit(.pong)
        case .ok:
            try requireEmpty(rest, operation: "+OK")
            emit(.ok)
        case .error:
            emit(.error(errorText(rest)))
        case .info:
            let json = trimmed(rest)
            guard json.first == UInt8(ascii: "{"), json.last == UInt8(ascii: "}") else {
                throw .malformedArguments(operation: "INFO")
            }
            emit(.info(json))
        case .unknown:
            throw .unknownOperation(String(decoding: name.prefix(16), as: UTF8.self))
        }
        return .done
    }

    private mutating func emitPendingBody(_ head: PendingHead, _ emit: (ServerOperation) -> Void) throws(NATSProtocolError) {
        state = .line
        try line.withBytes { (lineBytes) throws(NATSProtocolError) in
            try body.withBytes { (bodyBytes) throws(NATSProtocolError) in
                try Self.emitMessage(head, line: lineBytes, body: bodyBytes, emit)
            }
        }
        line.removeAll(keepingCapacity: true)
        if body.capacity > Self.retainedBodyCapacity {
            body = []
        } else {
            body.removeAll(keepingCapacity: true)
        }
    }

    /// `body` holds the message's bytes followed by CRLF.
    private static func emitMessage(_ head: PendingHead, line: UnsafeRawBufferPointer, body: UnsafeRawBufferPointer,
                                    _ emit: (ServerOperation) -> Void) throws(NATSProtocolError) {
        let total = head.totalByteCount
        guard body[total] == carriageReturn, body[total + 1] == lineFeed else { throw .missingLineTerminator }
        var headers: UnsafeRawBufferPointer?
        var payloadStart = 0
        if let headerByteCount = head.headerByteCount {
            let block = UnsafeRawBufferPointer(rebasing: body[..<headerByteCount])
            guard isHeaderBlock(block) else { throw .malformedHeaders }
            headers = block
            payloadStart = headerByteCount
        }
        let view = MessageView(
            subject: UnsafeRawBufferPointer(rebasing: line[head.subject]),
            subscriptionID: head.subscriptionID,
            replyTo: head.replyTo.map { UnsafeRawBufferPointer(rebasing: line[$0]) },
            headers: headers,
            payload: UnsafeRawBufferPointer(rebasing: body[payloadStart..<total]))
        emit(.message(view))
    }

    /// `NATS/1.0` first, an empty line last (RFC 7230-style fields in between are checked only
    /// when someone reads them, by `NATSHeaders`).
    private static func isHeaderBlock(_ block: UnsafeRawBufferPointer) -> Bool {
        let prefix = "NATS/1.0".utf8
        guard block.count >= prefix.count + 4, block.starts(with: prefix) else { return false }
        let end = block.count
        return block[end - 4] == carriageReturn && block[end - 3] == lineFeed
            && block[end - 2] == carriageReturn && block[end - 1] == lineFeed
    }

    // MARK: Arguments

    /// `MSG <subject> <sid> [reply-to] <#bytes>` or
    /// `HMSG <subject> <sid> [reply-to] <#header bytes> <#total bytes>`. `offset` is where
    /// `arguments` starts within the line, so the ranges index the line.
    private static func parseMessageArguments(_ arguments: UnsafeRawBufferPointer, offset: Int, isHeaderMessage: Bool,
                                              limits: ParserLimits) throws(NATSProtocolError) -> PendingHead {
        let operation = isHeaderMessage ? "HMSG" : "MSG"
        var fields: [Range<Int>] = []
        fields.reserveCapacity(5)
        var index = 0
        while index < arguments.count {
            while index < arguments.count, isSpace(arguments[index]) { index += 1 }
            guard index < arguments.count else { break }
            let start = index
            while index < arguments.count, !isSpace(arguments[index]) { index += 1 }
            guard fields.count < 5 else { throw .malformedArguments(operation: operation) }
            fields.append(start..<index)
        }
        let sizeCount = isHeaderMessage ? 2 : 1
        guard fields.count == 2 + sizeCount || fields.count == 3 + sizeCount else {
            throw .malformedArguments(operation: operation)
        }
        func number(_ range: Range<Int>) throws(NATSProtocolError) -> Int {
            guard let value = decimal(UnsafeRawBufferPointer(rebasing: arguments[range])) else {
                throw .malformedArguments(operation: operation)
            }
            return value
        }
        let total = try number(fields[fields.count - 1])
        var headerByteCount: Int?
        if isHeaderMessage {
            let headerBytes = try number(fields[fields.count - 2])
            guard headerBytes <= total else { throw .malformedHeaders }
            headerByteCount = headerBytes
        }
        guard total <= limits.maxPayloadBytes else {
            throw .payloadTooLarge(announced: total, limit: limits.maxPayloadBytes)
        }
        let sid = try number(fields[1])
        let shift = { (range: Range<Int>) in (range.lowerBound + offset)..<(range.upperBound + offset) }
        let hasReply = fields.count == 3 + sizeCount
        return PendingHead(subject: shift(fields[0]), replyTo: hasReply ? shift(fields[2]) : nil,
                           subscriptionID: UInt64(sid), headerByteCount: headerByteCount, totalByteCount: total)
    }

    /// Decimal digits only, at most 15 of them (far past any size or sid the protocol uses,
    /// and safe from overflow).
    private static func decimal(_ digits: UnsafeRawBufferPointer) -> Int? {
        guard !digits.isEmpty, digits.count <= 15 else { return nil }
        var value = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    private static func requireEmpty(_ rest: UnsafeRawBufferPointer, operation: String) throws(NATSProtocolError) {
        guard trimmed(rest).isEmpty else { throw .malformedArguments(operation: operation) }
    }

    /// `-ERR 'Unknown Subject'` → `Unknown Subject`; text without quotes is kept as it is.
    private static func errorText(_ rest: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let text = trimmed(rest)
        if text.count >= 2, text.first == UInt8(ascii: "'"), text.last == UInt8(ascii: "'") {
            return UnsafeRawBufferPointer(rebasing: text[1..<(text.count - 1)])
        }
        return text
    }
}

/// The operation names a server may send.
private enum OperationName: Equatable {
    case info, message, headerMessage, ping, pong, ok, error, unknown

    init(_ name: UnsafeRawBufferPointer) {
        func matches(_ expected: StaticString) -> Bool {
            guard name.count == expected.utf8CodeUnitCount else { return false }
            let pattern = UnsafeRawBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
            for index in 0..<name.count {
                var byte = name[index]
                if byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") { byte -= 32 }
                if byte != pattern[index] { return false }
            }
            return true
        }
        switch name.count {
        case 3 where matches("MSG"): self = .message
        case 3 where matches("+OK"): self = .ok
        case 4 where matches("HMSG"): self = .headerMessage
        case 4 where matches("PING"): self = .ping
        case 4 where matches("PONG"): self = .pong
        case 4 where matches("INFO"): self = .info
        case 4 where matches("-ERR"): self = .error
        default: self = .unknown
        }
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body that throws only protocol errors.
    fileprivate func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws(NATSProtocolError) -> Result) throws(NATSProtocolError) -> Result {
        let outcome = withUnsafeBytes { buffer in
            Swift.Result { () throws(NATSProtocolError) -> Result in try body(buffer) }
        }
        return try outcome.get()
    }
}
