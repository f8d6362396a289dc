import Testing
@testable import WebSocketProtocol

/// An outcome that can say what feeding two inputs back to back should produce.
protocol DripFeedOutcome: Equatable {
    /// The outcome of `first`'s input followed by `second`'s, each fed to a fresh parser.
    static func sequence(_ first: Self, _ second: Self) -> Self
}

/// Feeds an input to a fresh parser in every way a transport could deliver it and checks that
/// the outcome never depends on the chunking: whole, one byte at a time, split in two at every
/// index, and in three pieces. With `followedBy`, it also feeds the input concatenated with
/// another (complete) input and checks that the parser picks up exactly where the first ended.
/// Returns the outcome of the whole input.
@discardableResult
func verifyDripFeed<Outcome: DripFeedOutcome>(
    _ input: [UInt8],
    followedBy other: [UInt8]? = nil,
    sourceLocation: SourceLocation = #_sourceLocation,
    run: ([ArraySlice<UInt8>]) -> Outcome
) -> Outcome {
    func checkChunkings(_ bytes: [UInt8], expected: Outcome, label: String) {
        let byteByByte = run(bytes.indices.map { bytes[$0...$0] })
        #expect(byteByByte == expected, "\(label): byte by byte", sourceLocation: sourceLocation)
        for split in 0...bytes.count {
            let outcome = run([bytes[..<split], bytes[split...]])
            #expect(outcome == expected, "\(label): split at \(split)", sourceLocation: sourceLocation)
            if outcome != expected { break }
        }
        if bytes.count >= 3 {
            let third = bytes.count / 3
            let outcome = run([bytes[..<third], bytes[third..<(2 * third)], bytes[(2 * third)...]])
            #expect(outcome == expected, "\(label): three pieces", sourceLocation: sourceLocation)
        }
    }
    let whole = run([input[...]])
    checkChunkings(input, expected: whole, label: "input")
    if let other {
        let concatenated = input + other
        let expected = Outcome.sequence(whole, run([other[...]]))
        #expect(run([concatenated[...]]) == expected, "concatenated", sourceLocation: sourceLocation)
        checkChunkings(concatenated, expected: expected, label: "concatenated")
    }
    return whole
}

/// A deterministic generator for masking keys (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64 = 0x5EED) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Builds raw frame bytes by hand, including shapes our encoder never produces (non-minimal
/// lengths, reserved bits, bad opcodes), so the decoder is tested against the wire format
/// rather than against our own encoder.
func rawFrame(fin: Bool = true, rsv: UInt8 = 0, opcode: UInt8, payload: [UInt8] = [],
              mask: MaskingKey? = nil, lengthEncoding: Int? = nil, declaredLength: UInt64? = nil) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
    let length = declaredLength ?? UInt64(payload.count)
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    let encoding = lengthEncoding ?? (length <= 125 ? 7 : length <= 0xFFFF ? 16 : 64)
    switch encoding {
    case 7: bytes.append(maskBit | UInt8(length))
    case 16: bytes.append(maskBit | 126); bytes += [UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
    default:
        bytes.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(length >> UInt64(shift) & 0xFF)) }
    }
    var body = payload
    if let mask {
        bytes += [mask[0], mask[1], mask[2], mask[3]]
        for index in body.indices { body[index] ^= mask[index % 4] }
    }
    return bytes + body
}

let testKey = MaskingKey(0x37, 0xFA, 0x21, 0x3D)
