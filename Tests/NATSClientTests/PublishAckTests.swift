import JSON
import NATSProtocol
import Testing
import TestSupport
@testable import NATSClient

/// The compact reading of publish acknowledgements, held to the JSON path it stands in for.
@Suite struct PublishAckTests {
    private func general(_ text: [UInt8]) -> PublishAck? {
        guard let value = try? text.withUnsafeBytes({ try JSONParser.parse($0) }) else { return nil }
        return try? PublishAck(value)
    }

    @Test func theShapesTheServerWritesAreReadCompactly() throws {
        let cases: [(String, PublishAck)] = [
            (#"{"stream":"BB_P0","seq":1}"#, PublishAck(stream: "BB_P0", sequence: 1, isDuplicate: false)),
            (#"{"stream":"BB_P0","seq":0}"#, PublishAck(stream: "BB_P0", sequence: 0, isDuplicate: false)),
            (#"{"stream":"BB_P0", "seq":42}"#, PublishAck(stream: "BB_P0", sequence: 42, isDuplicate: false)),
            (#"{"stream":"S", "seq":3, "duplicate": true}"#, PublishAck(stream: "S", sequence: 3, isDuplicate: true)),
            ("{ \"stream\" :\t\"S\" ,\r\n\"seq\": 5 }\n", PublishAck(stream: "S", sequence: 5, isDuplicate: false)),
            (#"{"stream":"S","seq":9,"duplicate":true}"#, PublishAck(stream: "S", sequence: 9, isDuplicate: true)),
            (#"{"stream":"S","seq":9,"duplicate":false}"#, PublishAck(stream: "S", sequence: 9, isDuplicate: false)),
            (#"{"stream":"S","seq":12,"domain":"hub","duplicate":true}"#, PublishAck(stream: "S", sequence: 12, isDuplicate: true)),
            (#"{"stream":"S","seq":9223372036854775807}"#, PublishAck(stream: "S", sequence: UInt64(Int64.max), isDuplicate: false)),
        ]
        for (text, expected) in cases {
            let compact = try #require(PublishAck(compact: Array(text.utf8)), "not read compactly: \(text)")
            #expect(compact == expected, "\(text)")
            #expect(general(Array(text.utf8)) == expected, "the JSON path disagrees on \(text)")
        }
    }

    @Test func everythingElseIsLeftToTheJSONPath() {
        let others = [
            #"{"type":"io.nats.jetstream.api.v1.pub_ack","error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"}}"#,
            #"{"seq":1,"stream":"S"}"#, #"{"stre am":"S","seq":1}"#, #"{"stream":"S","seq":1,}"#, #"{"stream":"S\u0041","seq":1}"#,
            #"{"stream":"S\"x","seq":1}"#, #"{"stream":"","seq":1}"#, #"{"stream":"S","seq":01}"#,
            #"{"stream":"S","seq":-1}"#, #"{"stream":"S","seq":1.0}"#, #"{"stream":"S","seq":9223372036854775808}"#,
            #"{"stream":"S","seq":99999999999999999999}"#, #"{"stream":"S","seq":1}x"#, #"{"stream":"S","seq":1,"x":2}"#,
            #"{"stream":"S","seq":1,"duplicate":1}"#, #"{"stream":"S","seq":1,"duplicate":true,"domain":"d"}"#,
            #"{"stream":"S","seq":}"#, "{\"stream\":\"S\u{01}\",\"seq\":1}", "",
        ]
        for text in others { #expect(PublishAck(compact: Array(text.utf8)) == nil, "\(text)") }
        let whole = Array(#"{"stream":"S","seq":123,"domain":"d","duplicate":true}"#.utf8)
        for length in 0..<whole.count { #expect(PublishAck(compact: whole[..<length]) == nil, "cut at \(length)") }
    }

    /// Whatever the bytes, a compact reading is the JSON path's reading; a negative sequence is
    /// an error on either path, not a crash.
    @Test func aCompactReadingAgreesWithTheJSONPathOnMutatedAnswers() {
        let seeds = [#"{"stream":"BB_P0","seq":4711}"#, #"{"stream":"S","seq":9,"domain":"d","duplicate":true}"#]
            .map { Array($0.utf8) }
        let alphabet = Array(#"{}":,-0123456789.tfrueals"\ xS"#.utf8) + [0x09, 0x0A]
        var random = SeededGenerator(seed: 15)
        var compactReadings = 0
        for round in 0..<20_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...(random.next() % 3) {
                let position = Int(random.next() % UInt64(bytes.count + 1))
                switch random.next() % 3 {
                case 0 where position < bytes.count: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
                default: if position < bytes.count { bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))] }
                }
            }
            if let compact = PublishAck(compact: bytes) {
                compactReadings += 1
                #expect(general(bytes) == compact, "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        #expect(compactReadings > 100)
        #expect(general(Array(#"{"stream":"S","seq":-1}"#.utf8)) == nil)
    }
}
