// Fuzz target: the client side of the opening handshake — the response-head parser and
// `ClientHandshake.receive`, which validates the 101 against what we offered.
//
// The client's key comes from a fixed-seed generator, so it is the same in every run:
// `fuzz/corpus/http-response/` holds 101 responses carrying its accept value, which lets the
// fuzzer get past the accept check to the subprotocol and permessage-deflate validation.
//
// Input layout: byte 0 chooses the setup —
//   bits 0–5   where the rest is split into two pieces (0 … 63 sixty-thirds of it)
//   bit 6      offer permessage-deflate (server_max_window_bits=10, client_max_window_bits)
//   bit 7      tiny parser limits (64-byte status line, 256-byte header block, 4 fields)
// and bytes 1... are the server's response.
//
// Invariants: the bytes returned as unconsumed are exactly the input after the head; a result
// names only a subprotocol we offered and deflate parameters only when we offered deflate; an
// error is sticky.
import WebSocketProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private struct FixedSeed: RandomNumberGenerator {
    var state: UInt64 = 0x0123_4567_89AB_CDEF
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state
    }
}

private let smallLimits = HTTPParserLimits(maximumStartLineLength: 64, maximumHeaderBlockSize: 256,
                                           maximumHeaderCount: 4)
private let offer = DeflateOffer(serverMaxWindowBits: 10, offersClientMaxWindowBits: true)
private let subprotocols = ["bangbang.v1", "chat"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let setup = data[0]
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let split = Int(setup & 0x3F) * input.count / 63
    var generator = FixedSeed()
    var handshake = ClientHandshake(host: "localhost:8080", path: "/ws", subprotocols: subprotocols,
                                    deflate: setup & 0x40 == 0 ? nil : offer,
                                    limits: setup & 0x80 == 0 ? HTTPParserLimits() : smallLimits,
                                    using: &generator)
    let pieces = [UnsafeBufferPointer(rebasing: input[..<split]), UnsafeBufferPointer(rebasing: input[split...])]
    for piece in pieces {
        let progress: ClientHandshake.Progress
        do {
            progress = try handshake.receive(piece)
        } catch {
            if case .malformedResponse = error {
                do {
                    _ = try handshake.receive(piece)
                    fatalError("ClientHandshake accepted input after failing with \(error)")
                } catch let again {
                    require(again == error, "ClientHandshake changed its error: \(error) then \(again)")
                }
            }
            return 0
        }
        guard case .established(let result) = progress else { continue }
        let rest = Array(piece[(piece.count - result.unconsumedBytes.count)...])
        require(result.unconsumedBytes == rest, "unconsumed bytes are not the tail of the piece")
        if let subprotocol = result.subprotocol {
            require(subprotocols.contains(subprotocol), "accepted an unoffered subprotocol")
        }
        if let deflate = result.deflate {
            require(handshake.deflateOffer != nil, "deflate agreed without an offer")
            require(deflate.serverMaxWindowBits <= 10, "server window above our cap of 10")
            // The agreed parameters must be usable: building a connection must not trap.
            _ = WebSocketConnection(role: .client, deflate: deflate)
        }
        return 0
    }
    return 0
}
