import Testing
import TestSupport
@testable import Forwarding

/// What feeding some bytes to a fresh `ProxyHeaderParser` came to.
enum ProxyFeedOutcome: Equatable, CustomStringConvertible {
    /// The header, and every byte after it (in this piece and the later ones), untouched.
    case complete(ProxyHeader, rest: [UInt8])
    case needsMoreData
    case failed(ProxyHeaderError.Kind)

    var header: ProxyHeader? {
        if case .complete(let header, _) = self { return header }
        return nil
    }

    var description: String {
        switch self {
        case .complete(let header, let rest): "complete(\(header), rest: \(rest.count) bytes)"
        case .needsMoreData: "needsMoreData"
        case .failed(let kind): "failed(\(kind))"
        }
    }
}

/// Feeds `pieces` in order to one parser, as a socket would deliver them.
func feed(_ pieces: [ArraySlice<UInt8>]) -> ProxyFeedOutcome {
    var parser = ProxyHeaderParser()
    for (index, piece) in pieces.enumerated() {
        do {
            switch try parser.parse(piece) {
            case .needsMoreData:
                continue
            case .complete(let header, let consumed):
                precondition((1...piece.count).contains(consumed), "consumedBytes \(consumed) outside the piece")
                let rest = Array(piece.dropFirst(consumed)) + pieces[(index + 1)...].flatMap { $0 }
                return .complete(header, rest: rest)
            }
        } catch {
            // An error is sticky: the same one again, whatever comes next.
            do {
                _ = try parser.parse([0x0D])
                Issue.record("the parser accepted bytes after failing with \(error)")
            } catch let again {
                #expect(again == error)
            }
            return .failed(error.kind)
        }
    }
    return .needsMoreData
}

/// Drip-feeds `input` to fresh parsers (see `verifyDripFeed` in TestSupport) and returns the
/// outcome of the whole input.
@discardableResult
func verifyDripFeed(_ input: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> ProxyFeedOutcome {
    TestSupport.verifyDripFeed(input, sourceLocation: sourceLocation) { feed($0) }
}

/// A v2 header: signature, version/command, family/transport, length, then `body`.
func v2Header(command: UInt8 = 0x1, familyAndTransport: UInt8, body: [UInt8], declaredLength: Int? = nil) -> [UInt8] {
    let length = declaredLength ?? body.count
    return [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A, 0x20 | command, familyAndTransport,
            UInt8(length >> 8), UInt8(length & 0xFF)] + body
}

func tlv(_ type: UInt8, _ value: [UInt8]) -> [UInt8] {
    [type, UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
