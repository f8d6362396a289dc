// Fuzz target: the NATS client's parser of server operations and its header blocks.
//
// The whole input is what a server sent. Invariants, beyond "no crash and no sanitizer report":
//   - the outcome (operations, then at most one failure) does not depend on how the bytes
//     were split: whole, in two at a point taken from the input, and in pieces of 1 to 7 bytes;
//   - nothing emitted passes the limits (payload size, control line length);
//   - a header block that parses encodes back to a block that parses to the same headers.
import NATSProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// Small limits, so short inputs reach them.
private let limits = ParserLimits(maxControlLineBytes: 512, maxPayloadBytes: 2048)

private enum Outcome: Equatable {
    case operation([UInt8])
    case failure(NATSProtocolError)
}

private func describe(_ operation: ServerOperation) -> [UInt8] {
    switch operation {
    case .info(let json): return Array("I".utf8) + json
    case .ping: return Array("P".utf8)
    case .pong: return Array("O".utf8)
    case .ok: return Array("K".utf8)
    case .error(let text): return Array("E".utf8) + text
    case .message(let view):
        require(view.payload.count + (view.headers?.count ?? 0) <= limits.maxPayloadBytes, "message past the payload limit")
        require(view.subject.count < limits.maxControlLineBytes, "subject past the control line limit")
        if let block = view.headers { checkHeaders(block) }
        var bytes = Array("M".utf8) + view.subject + [0] + Array(String(view.subscriptionID).utf8) + [0]
        bytes += (view.replyTo.map(Array.init) ?? [0xFF]) + [0] + (view.headers.map(Array.init) ?? [0xFF]) + [0] + view.payload
        return bytes
    }
}

private func checkHeaders(_ block: UnsafeRawBufferPointer) {
    guard let headers = try? NATSHeaders.parse(block) else { return }
    guard let encoded = try? headers.encoded() else { return }
    let reparsed = encoded.withUnsafeBytes { try? NATSHeaders.parse($0) }
    require(reparsed == headers, "header block does not round trip: \(String(decoding: encoded, as: UTF8.self))")
}

private func run(_ input: UnsafeRawBufferPointer, pieces: [Range<Int>]) -> [Outcome] {
    var parser = OperationParser(limits: limits)
    var outcome: [Outcome] = []
    for piece in pieces {
        do {
            try parser.parse(UnsafeRawBufferPointer(rebasing: input[piece])) { outcome.append(.operation(describe($0))) }
        } catch {
            outcome.append(.failure(error))
            return outcome
        }
    }
    return outcome
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNATSProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let whole = run(input, pieces: [0..<size])
    let split = size == 0 ? 0 : Int(input[0]) * size / 256
    require(run(input, pieces: [0..<split, split..<size]) == whole, "split at \(split) changed the outcome")
    var pieces: [Range<Int>] = []
    var start = 0
    while start < size {
        let length = 1 + Int(input[start] % 7)
        pieces.append(start..<min(size, start + length))
        start += length
    }
    require(run(input, pieces: pieces) == whole, "small pieces changed the outcome")
    return 0
}
