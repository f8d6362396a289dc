import Testing
import TestSupport
@testable import WebSocketProtocol

@Suite struct DeflateCodecTests {
    let hello = Array("Hello".utf8)

    func inflate(_ payload: [UInt8], with inflater: MessageInflater, limit: Int = 1 << 20) throws(ProtocolViolation) -> [UInt8] {
        try inflater.inflateMessage(payload, limit: limit)
    }

    func sampleMessage(_ seed: Int, length: Int = 3000) -> [UInt8] {
        // JSON-ish text with repetition, so compression actually does something.
        let words = ["order", "courier", "campus", "errand", "status", "pickup", "帮帮", "\"id\":", "{", "}"]
        var bytes: [UInt8] = []
        var state = seed
        while bytes.count < length {
            state = state &* 1_103_515_245 &+ 12_345
            bytes += Array(words[(state >> 8) & 0x7FFF % words.count].utf8) + [0x20]
        }
        return bytes
    }

    // MARK: RFC 7692 §7.2.3 examples

    @Test func compressesHelloExactlyAsRFC7692Section7_2_3_1() {
        let deflater = MessageDeflater(windowBits: 15, keepsContext: false)
        #expect(deflater.compress(hello) == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
    }

    @Test func sharesTheWindowAcrossMessagesAsRFC7692Section7_2_3_2() throws {
        let deflater = MessageDeflater(windowBits: 15, keepsContext: true)
        #expect(deflater.compress(hello) == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        #expect(deflater.compress(hello) == [0xF2, 0x00, 0x11, 0x00, 0x00])
        let inflater = MessageInflater(windowBits: 15, keepsContext: true)
        #expect(try inflate([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], with: inflater) == hello)
        #expect(try inflate([0xF2, 0x00, 0x11, 0x00, 0x00], with: inflater) == hello)
    }

    @Test(arguments: [
        [UInt8(0xF2), 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00],                               // §7.2.3.1
        [0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00],              // §7.2.3.3 stored block
        [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00],                                      // §7.2.3.4 BFINAL
        [0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00],                                // BFINAL plus padding
        [0xF2, 0x48, 0x05, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xCA, 0xC9, 0xC9, 0x07, 0x00], // §7.2.3.5 two blocks
    ])
    func inflatesTheRFC7692HelloExamples(payload: [UInt8]) throws {
        let inflater = MessageInflater(windowBits: 15, keepsContext: true)
        #expect(try inflate(payload, with: inflater) == hello)
        // A BFINAL block ends the peer's stream; the next message must still inflate.
        #expect(try inflate([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], with: inflater) == hello)
    }

    @Test func emptyMessageIsASingleZeroByteAndRoundTrips() throws {
        for keepsContext in [false, true] {
            let deflater = MessageDeflater(windowBits: 15, keepsContext: keepsContext)
            let inflater = MessageInflater(windowBits: 15, keepsContext: keepsContext)
            for _ in 0..<3 {
                let compressed = deflater.compress([])
                #expect(compressed == [0x00])
                #expect(try inflate(compressed, with: inflater) == [])
            }
        }
    }

    // MARK: Round trips

    @Test(arguments: 8...15)
    func roundTripsAtEveryWindowSizeWithAndWithoutContextTakeover(windowBits: Int) throws {
        for keepsContext in [false, true] {
            let deflater = MessageDeflater(windowBits: windowBits, keepsContext: keepsContext)
            let inflater = MessageInflater(windowBits: windowBits, keepsContext: keepsContext)
            for seed in 0..<5 {
                let message = sampleMessage(seed, length: 200 + seed * 3000)
                let compressed = deflater.compress(message)
                #expect(!compressed.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]), "tail must be stripped")
                #expect(compressed.count < message.count)
                #expect(try inflate(compressed, with: inflater) == message)
                #expect(deflater.holdsStream == keepsContext)
                #expect(inflater.holdsStream == keepsContext)
            }
        }
    }

    @Test func inflatingInPiecesEqualsInflatingWhole() throws {
        let message = sampleMessage(7, length: 5000)
        let compressed = MessageDeflater(windowBits: 15, keepsContext: false).compress(message)
        for split in stride(from: 0, through: compressed.count, by: 37) {
            let inflater = MessageInflater(windowBits: 15, keepsContext: false)
            var output: [UInt8] = []
            try compressed[..<split].withUnsafeBytes { (bytes) throws in try inflater.inflate(bytes, appendingTo: &output, limit: 1 << 20) }
            try compressed[split...].withUnsafeBytes { (bytes) throws in try inflater.inflate(bytes, appendingTo: &output, limit: 1 << 20) }
            try inflater.finishMessage(appendingTo: &output, limit: 1 << 20)
            #expect(output == message)
        }
    }

    @Test func incompressibleMessagesRoundTrip() throws {
        var generator = SeededGenerator()
        let noise = (0..<70_000).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let compressed = MessageDeflater(windowBits: 15, keepsContext: false).compress(noise)
        #expect(try inflate(compressed, with: MessageInflater(windowBits: 15, keepsContext: false)) == noise)
    }

    @Test func serverStyleIndependentMessagesInflateOnAContextKeepingInflater() throws {
        // The server compresses every message on its own; a client that allows context takeover
        // must still read them.
        let inflater = MessageInflater(windowBits: 15, keepsContext: true)
        for seed in 0..<4 {
            let message = sampleMessage(seed)
            let compressed = MessageDeflater(windowBits: 15, keepsContext: false).compress(message)
            #expect(try inflate(compressed, with: inflater) == message)
        }
    }

    // MARK: Limits and corruption

    @Test func inflatedSizeLimitIsInclusive() throws {
        let message = [UInt8](repeating: 0x61, count: 1000)
        let compressed = MessageDeflater(windowBits: 15, keepsContext: false).compress(message)
        #expect(try inflate(compressed, with: MessageInflater(windowBits: 15, keepsContext: false), limit: 1000) == message)
        #expect(throws: ProtocolViolation.messageTooLarge(limit: 999)) {
            try inflate(compressed, with: MessageInflater(windowBits: 15, keepsContext: false), limit: 999)
        }
    }

    @Test func decompressionBombFailsFastWithoutAllocatingItsOutput() throws {
        // 32 MiB of zeros as one message: a context-keeping deflater compresses it in 1 MiB
        // steps, and the flush tails between steps are put back so the pieces form one stream.
        let deflater = MessageDeflater(windowBits: 15, keepsContext: true)
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var bomb: [UInt8] = []
        for step in 0..<32 {
            if step > 0 { bomb += [0x00, 0x00, 0xFF, 0xFF] }
            bomb += deflater.compress(zeros)
        }
        #expect(bomb.count < 64 * 1024, "the bomb is small on the wire: \(bomb.count) bytes")

        let limit = 1 << 20
        let inflater = MessageInflater(windowBits: 15, keepsContext: false)
        var output: [UInt8] = []
        #expect(throws: ProtocolViolation.messageTooLarge(limit: limit)) {
            try bomb.withUnsafeBytes { (bytes) throws in try inflater.inflate(bytes, appendingTo: &output, limit: limit) }
        }
        #expect(output.count <= limit + 1)
        #expect(output.capacity < 4 * limit, "inflated output must stay near the limit, not 32 MiB")
    }

    @Test func garbageIsRejectedAsInvalidCompressedData() {
        #expect(throws: ProtocolViolation.invalidCompressedData) {
            try inflate([0xFF, 0xFF, 0xFF, 0xFF, 0x12], with: MessageInflater(windowBits: 15, keepsContext: false))
        }
    }

    @Test func streamsAreReleasedAfterEachMessageWithoutContextTakeover() throws {
        let deflater = MessageDeflater(windowBits: 15, keepsContext: false)
        let inflater = MessageInflater(windowBits: 15, keepsContext: false)
        #expect(!deflater.holdsStream && !inflater.holdsStream)
        let compressed = deflater.compress(hello)
        #expect(!deflater.holdsStream)
        var output: [UInt8] = []
        try compressed.withUnsafeBytes { (bytes) throws in try inflater.inflate(bytes, appendingTo: &output, limit: 100) }
        #expect(inflater.holdsStream, "allocated while the message is in progress")
        try inflater.finishMessage(appendingTo: &output, limit: 100)
        #expect(!inflater.holdsStream)
        #expect(output == hello)
    }
}
