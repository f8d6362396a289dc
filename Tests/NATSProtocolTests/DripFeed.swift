import Testing
import TestSupport
@testable import NATSProtocol

/// What parsing a whole input produced, owned so chunkings can be compared.
enum Parsed: Equatable {
    case info(String)
    case message(subject: String, sid: UInt64, replyTo: String?, headers: [UInt8]?, payload: [UInt8])
    case ping, pong, ok
    case error(String)
    case failure(NATSProtocolError)

    init(_ operation: ServerOperation) {
        switch operation {
        case .info(let json): self = .info(String(decoding: json, as: UTF8.self))
        case .message(let view):
            self = .message(subject: String(decoding: view.subject, as: UTF8.self), sid: view.subscriptionID,
                            replyTo: view.replyTo.map { String(decoding: $0, as: UTF8.self) },
                            headers: view.headers.map { Array($0) }, payload: Array(view.payload))
        case .ping: self = .ping
        case .pong: self = .pong
        case .ok: self = .ok
        case .error(let text): self = .error(String(decoding: text, as: UTF8.self))
        }
    }
}

/// Feeds `chunks` to one fresh parser; a failure ends the outcome and must then stick.
func parse(_ chunks: [ArraySlice<UInt8>], limits: ParserLimits = ParserLimits()) -> [Parsed] {
    var parser = OperationParser(limits: limits)
    var outcome: [Parsed] = []
    for chunk in chunks {
        do {
            try chunk.withUnsafeBytes { buffer in
                try parser.parse(buffer) { outcome.append(Parsed($0)) }
            }
        } catch let error as NATSProtocolError {
            outcome.append(.failure(error))
            // Sticky: the same error again, and nothing more emitted.
            do {
                try [UInt8]("PING\r\n".utf8).withUnsafeBytes { buffer in try parser.parse(buffer) { outcome.append(Parsed($0)) } }
            } catch let second as NATSProtocolError where second == error {
                return outcome
            } catch {}
            outcome.append(.error("failure did not stick"))
            return outcome
        } catch {
            fatalError("unexpected error type \(error)")
        }
    }
    if !parser.isAtOperationBoundary { outcome.append(.error("incomplete")) }
    return outcome
}

/// Drip-feeds `input` to fresh parsers (see `verifyDripFeed` in TestSupport); what follows a
/// complete input must be parsed exactly where it ended, and nothing follows a failure.
@discardableResult
func verifyDripFeed(_ input: [UInt8], followedBy other: [UInt8]? = nil, limits: ParserLimits = ParserLimits(),
                    sourceLocation: SourceLocation = #_sourceLocation) -> [Parsed] {
    TestSupport.verifyDripFeed(input, followedBy: other, combine: { whole, next in
        let ended = whole.contains(where: { if case .failure = $0 { true } else { false } })
            || whole.last == .error("incomplete")
        return ended ? whole : whole + next
    }, sourceLocation: sourceLocation) { parse($0, limits: limits) }
}

extension Array where Element == UInt8 {
    init(_ text: String) { self = Array(text.utf8) }
}
