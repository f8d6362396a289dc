import Testing
import TestSupport
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

/// Bytes that would be invalid in any head, so parsing them by mistake cannot go unnoticed.
let trailingAfterHead: [UInt8] = [0x81, 0x85, 0x00, 0x0D, 0x0A, 0x0A, 0x20] + Array("GET / HTTP/1.1\r\n\r\n".utf8)

/// Drip-feeds one head to fresh parsers (see `verifyDripFeed`), then again with trailing bytes
/// appended, cut anywhere up to just past the head: the trailing bytes must come back as
/// unconsumed, untouched, and never change the head. Returns the outcome of the whole feed.
@discardableResult
func verifyHeadDripFeed<Parser: IncrementalHeadParser>(
    _ parser: Parser.Type, _ input: [UInt8], limits: HTTPParserLimits = HTTPParserLimits(),
    sourceLocation: SourceLocation = #_sourceLocation
) -> FeedOutcome<Parser.Head> {
    let run = { (pieces: [ArraySlice<UInt8>]) in feedHead(Parser.self, limits: limits, pieces: pieces) }
    let expected = run([input[...]])
    verifyChunkings(of: input, give: expected, cuts: sampledCuts(input.count, through: input.count),
                    sourceLocation: sourceLocation, feed: run)
    let withTrailing: FeedOutcome<Parser.Head>
    switch expected {
    case .complete(let head, let unconsumed):
        #expect(unconsumed.isEmpty, sourceLocation: sourceLocation)
        withTrailing = .complete(head, unconsumed: trailingAfterHead)
    case .failed:
        withTrailing = expected
    case .incomplete:
        return expected
    }
    let extended = input + trailingAfterHead
    #expect(run([extended[...]]) == withTrailing, "with trailing bytes, whole", sourceLocation: sourceLocation)
    verifyChunkings(of: extended, give: withTrailing, cuts: sampledCuts(extended.count, through: input.count + 1),
                    label: "with trailing bytes", sourceLocation: sourceLocation, feed: run)
    return expected
}

/// Feeds `pieces` in order to one fresh parser, as a socket would deliver them.
func feedHead<Parser: IncrementalHeadParser>(_: Parser.Type, limits: HTTPParserLimits,
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

/// Every cut up to `through`, sampled for very long inputs so the quadratic cost stays small,
/// and always the last few.
private func sampledCuts(_ count: Int, through limit: Int) -> [Int] {
    let last = min(limit, count)
    let stride = count > 2048 ? 61 : 1
    var cuts = Set(Swift.stride(from: 0, to: last, by: stride))
    for near in [last - 2, last - 1, last] where near >= 0 && near <= count { cuts.insert(near) }
    return cuts.sorted()
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

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
