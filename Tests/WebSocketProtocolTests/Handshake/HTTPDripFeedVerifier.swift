import Testing
@testable import WebSocketProtocol

/// A head parser as the verifier drives it.
protocol IncrementalHeadParser {
    associatedtype Head: Sendable & Hashable
    init(limits: HTTPParserLimits)
    mutating func parse(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> HTTPParseProgress<Head>
}

extension HTTPRequestParser: IncrementalHeadParser {}
extension HTTPResponseParser: IncrementalHeadParser {}

/// What feeding a sequence of pieces produced.
enum FeedOutcome<Head: Hashable>: Hashable {
    case complete(Head, unconsumed: [UInt8])
    case failed(HTTPParseError)
    case incomplete
}

/// Feeds one input to a fresh parser in many ways — whole, byte by byte, split in two at every
/// index, and each of those again with trailing bytes appended — and requires every way to give
/// the same outcome. Trailing bytes must come back as unconsumed, untouched, and never change
/// the head. Returns the outcome of the whole feed.
enum DripFeedVerifier {
    /// Bytes that would be invalid in any head, so parsing them by mistake cannot go unnoticed.
    static let trailing: [UInt8] = [0x81, 0x85, 0x00, 0x0D, 0x0A, 0x0A, 0x20] + Array("GET / HTTP/1.1\r\n\r\n".utf8)

    @discardableResult
    static func verify<Parser: IncrementalHeadParser>(
        _ parser: Parser.Type, _ input: [UInt8], limits: HTTPParserLimits = HTTPParserLimits(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> FeedOutcome<Parser.Head> {
        let expected = feed(Parser.self, limits: limits, pieces: [input])
        for pieces in splits(of: input) {
            let outcome = feed(Parser.self, limits: limits, pieces: pieces)
            #expect(outcome == expected, "pieces of sizes \(pieces.map(\.count).prefix(8))…", sourceLocation: sourceLocation)
            if outcome != expected { break }
        }
        let withTrailing: FeedOutcome<Parser.Head>
        switch expected {
        case .complete(let head, let unconsumed):
            #expect(unconsumed.isEmpty, sourceLocation: sourceLocation)
            withTrailing = .complete(head, unconsumed: trailing)
        case .failed:
            withTrailing = expected
        case .incomplete:
            return expected
        }
        for pieces in splits(of: input + trailing, limitedTo: input.count + 1) {
            let outcome = feed(Parser.self, limits: limits, pieces: pieces)
            #expect(outcome == withTrailing, "with trailing bytes, pieces \(pieces.map(\.count).prefix(8))…",
                    sourceLocation: sourceLocation)
            if outcome != withTrailing { break }
        }
        return expected
    }

    static func feed<Parser: IncrementalHeadParser>(_: Parser.Type, limits: HTTPParserLimits,
                                                    pieces: [ArraySlice<UInt8>]) -> FeedOutcome<Parser.Head> {
        var parser = Parser(limits: limits)
        for (index, piece) in pieces.enumerated() {
            do {
                switch try parser.parse(piece) {
                case .needsMoreData:
                    continue
                case .complete(let head, let consumed):
                    #expect(consumed >= 1 && consumed <= piece.count)
                    var rest = Array(piece.dropFirst(consumed))
                    for later in pieces[(index + 1)...] { rest += later }
                    return .complete(head, unconsumed: rest)
                }
            } catch {
                return .failed(error)
            }
        }
        return .incomplete
    }

    static func feed<Parser: IncrementalHeadParser>(_ type: Parser.Type, limits: HTTPParserLimits,
                                                    pieces: [[UInt8]]) -> FeedOutcome<Parser.Head> {
        feed(type, limits: limits, pieces: pieces.map { $0[...] })
    }

    /// Byte by byte, then a split in two at every index up to `limitedTo` (sampled for very
    /// long inputs so the quadratic cost stays small), then the bytes in one piece.
    private static func splits(of input: [UInt8], limitedTo limit: Int? = nil) -> [[ArraySlice<UInt8>]] {
        var result: [[ArraySlice<UInt8>]] = [input.indices.map { input[$0...$0] }, [input[...]]]
        let last = min(limit ?? input.count, input.count)
        let stride = input.count > 2048 ? 61 : 1
        var cuts = Set(Swift.stride(from: 1, to: last, by: stride))
        for near in [last - 2, last - 1, last] where near >= 1 && near < input.count { cuts.insert(near) }
        for cut in cuts.sorted() {
            result.append([input[..<cut], input[cut...]])
        }
        return result
    }
}

extension FeedOutcome {
    var head: Head? {
        if case .complete(let head, _) = self { return head }
        return nil
    }

    var error: HTTPParseError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// A deterministic generator for keys in tests (SplitMix64).
struct HandshakeSeededGenerator: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
