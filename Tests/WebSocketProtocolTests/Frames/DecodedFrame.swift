import Testing
import TestSupport
@testable import WebSocketProtocol

/// What the decoder produced for an input, reassembled for comparison.
enum Decoded: Equatable {
    case frame(FrameHeader, payload: [UInt8])
    case failure(ProtocolViolation)
}

struct DecoderLimits {
    var role: Role = .server
    var maxFrameSize = 1 << 20
    var maxMessageSize = 1 << 20
    var maxFragments = 1024
    var compression = false

    func makeDecoder() -> FrameDecoder {
        FrameDecoder(role: role, maxFrameSize: maxFrameSize, maxMessageSize: maxMessageSize,
                     maxFragmentsPerMessage: maxFragments, allowsCompression: compression)
    }
}

/// Runs a fresh decoder over `chunks`, unmasking payload as the connection would.
/// Payload delivered for a frame that never completes is reported as a trailing pseudo-frame
/// only if a header was seen, so tests can tell "no payload buffered" from "payload buffered".
func decode(_ chunks: [ArraySlice<UInt8>], limits: DecoderLimits = DecoderLimits()) -> [Decoded] {
    var decoder = limits.makeDecoder()
    var results: [Decoded] = []
    var header: FrameHeader?
    var payload: [UInt8] = []
    for chunk in chunks {
        let failed = chunk.withUnsafeBytes { bytes -> ProtocolViolation? in
            var index = 0
            do {
                while let event = try decoder.next(in: bytes, at: &index) {
                    switch event {
                    case .header(let h):
                        header = h
                        payload = []
                    case .payload(let piece, let phase):
                        let start = payload.count
                        payload.append(contentsOf: piece)
                        header?.maskingKey?.apply(to: &payload, range: start..<payload.count, phase: phase)
                    case .frameEnd:
                        results.append(.frame(header!, payload: payload))
                        header = nil
                    }
                }
                precondition(index == bytes.count, "decoder returned nil at \(index) of \(bytes.count): \(Array(bytes)) state \(decoder.progress.state)")
                return nil
            } catch {
                return error as? ProtocolViolation
            }
        }
        if let failed {
            results.append(.failure(failed))
            return results
        }
    }
    return results
}

func decodeWhole(_ bytes: [UInt8], limits: DecoderLimits = DecoderLimits()) -> [Decoded] {
    decode([bytes[...]], limits: limits)
}

/// Drip-feeds frames to fresh decoders (see `verifyDripFeed` in TestSupport). After a failure
/// the decoder reads nothing more, so a following input adds nothing.
@discardableResult
func verifyDripFeed(_ input: [UInt8], followedBy other: [UInt8]? = nil,
                    sourceLocation: SourceLocation = #_sourceLocation,
                    run: ([ArraySlice<UInt8>]) -> [Decoded]) -> [Decoded] {
    TestSupport.verifyDripFeed(input, followedBy: other, combine: { first, second in
        if case .failure? = first.last { return first }
        return first + second
    }, sourceLocation: sourceLocation, feed: run)
}
