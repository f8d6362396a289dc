// One drip-feed verifier for every sans-I/O parser: a socket may deliver any input in any
// pieces, so a parser's events must never depend on where the reads split it. Each suite says
// how to feed pieces to a fresh parser and what it produced (`feed`); this file decides the
// chunkings and compares every one with the input fed whole.

import Testing

/// The ways `verifyDripFeed` cuts an input.
public enum DripFeed {
    /// One way of cutting bytes into pieces, with a label for failure messages.
    public struct Chunking {
        public let label: String
        public let pieces: [ArraySlice<UInt8>]
    }

    /// Byte by byte, split in two at every index in `cuts` (default: every index, empty pieces
    /// included), and in three pieces.
    public static func chunkings(of bytes: [UInt8], cuts: [Int]? = nil) -> [Chunking] {
        var result = [Chunking(label: "byte by byte", pieces: bytes.indices.map { bytes[$0...$0] })]
        for cut in cuts ?? Array(0...bytes.count) where cut >= 0 && cut <= bytes.count {
            result.append(Chunking(label: "split at \(cut)", pieces: [bytes[..<cut], bytes[cut...]]))
        }
        if bytes.count >= 3 {
            let third = bytes.count / 3
            result.append(Chunking(label: "three pieces",
                                   pieces: [bytes[..<third], bytes[third..<(2 * third)], bytes[(2 * third)...]]))
        }
        return result
    }
}

/// Checks that every chunking of `bytes` gives `expected`. Stops at the first two-piece split
/// that differs, so one bug does not report hundreds of times.
public func verifyChunkings<Outcome: Equatable>(
    of bytes: [UInt8], give expected: Outcome, cuts: [Int]? = nil, label: String = "input",
    sourceLocation: SourceLocation = #_sourceLocation, feed: ([ArraySlice<UInt8>]) -> Outcome
) {
    for chunking in DripFeed.chunkings(of: bytes, cuts: cuts) {
        let outcome = feed(chunking.pieces)
        #expect(outcome == expected, "\(label): \(chunking.label): \(outcome) instead of \(expected)",
                sourceLocation: sourceLocation)
        if outcome != expected { break }
    }
}

/// Feeds `input` whole and in every chunking and checks the outcome never depends on the
/// chunking. With `followedBy`, also feeds `input` and `other` back to back and checks the
/// parser picks up exactly where `input` ended: the outcome must be `combine(whole, other's)`.
/// Returns the outcome of the whole input.
@discardableResult
public func verifyDripFeed<Outcome: Equatable>(
    _ input: [UInt8], followedBy other: [UInt8]? = nil,
    combine: (Outcome, Outcome) -> Outcome = { first, _ in first },
    sourceLocation: SourceLocation = #_sourceLocation, feed: ([ArraySlice<UInt8>]) -> Outcome
) -> Outcome {
    let whole = feed([input[...]])
    verifyChunkings(of: input, give: whole, sourceLocation: sourceLocation, feed: feed)
    if let other {
        let concatenated = input + other
        let expected = combine(whole, feed([other[...]]))
        #expect(feed([concatenated[...]]) == expected, "concatenated", sourceLocation: sourceLocation)
        verifyChunkings(of: concatenated, give: expected, label: "concatenated", sourceLocation: sourceLocation,
                        feed: feed)
    }
    return whole
}

/// An outcome that knows what two inputs fed back to back produce, so `followedBy` needs no
/// `combine`.
public protocol DripFeedOutcome: Equatable {
    /// The outcome of `first`'s input followed by `second`'s, each fed to a fresh parser.
    static func sequence(_ first: Self, _ second: Self) -> Self
}

@discardableResult
public func verifyDripFeed<Outcome: DripFeedOutcome>(
    _ input: [UInt8], followedBy other: [UInt8]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation, feed: ([ArraySlice<UInt8>]) -> Outcome
) -> Outcome {
    verifyDripFeed(input, followedBy: other, combine: Outcome.sequence, sourceLocation: sourceLocation, feed: feed)
}
