// Fuzz target: the permessage-deflate decompressor on arbitrary (mostly invalid) data.
//
// Input layout: byte 0 chooses the setup —
//   bits 0–2   window bits 8 + n (8 … 15)
//   bit 3      keep context between messages (the peer did not agree to no_context_takeover)
//   bits 4–7   piece size the payload is fed in: 1 << (n % 12) bytes
// byte 1 splits the rest into two messages at a proportional point; bytes 2... are the payload.
//
// Invariants, beyond "no crash and no sanitizer report": output never exceeds the 64 KiB limit
// (a bomb fails with `.messageTooLarge` instead), and with a 15-bit window how a message is cut
// into pieces never changes the outcome: inflating it piece by piece gives the same bytes, or
// the same error, as inflating it whole.
//
// Why only 15 bits: zlib (built without INFLATE_STRICT, as distributions ship it) accepts a
// distance beyond a smaller window when the bytes it points at are still in the output buffer
// of the current inflate call. Such a stream is invalid for the negotiated window, and whether
// it is caught then depends on where the transport cut it (corpus files
// `window*-distance-beyond-window*`). That is harmless — zlib never reads outside its window or
// the output buffer, and the size limit still holds — so for small windows only agreement on
// valid output is required: when both ways succeed they must give the same bytes, and they may
// differ only where one of them reports `.invalidCompressedData`.
import WebSocketProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private let limit = 64 * 1024

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInflate(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 1 else { return 0 }
    let setup = data[0]
    let windowBits = 8 + Int(setup & 7)
    let keepsContext = setup & 8 != 0
    let pieceSize = 1 << (Int(setup >> 4) % 12)
    let payload = UnsafeRawBufferPointer(start: data + 2, count: size - 2)
    let split = Int(data[1]) * payload.count / 255
    let messages = [UnsafeRawBufferPointer(rebasing: payload[..<split]),
                    UnsafeRawBufferPointer(rebasing: payload[split...])]

    let pieced = MessageInflater(windowBits: windowBits, keepsContext: keepsContext)
    let whole = MessageInflater(windowBits: windowBits, keepsContext: keepsContext)
    for message in messages {
        let piecewise = inflate(message, with: pieced, pieceSize: pieceSize)
        let atOnce = Result { () throws(ProtocolViolation) in try whole.inflateMessage(Array(message), limit: limit) }
        if case .success(let bytes) = piecewise {
            require(bytes.count <= limit, "inflated \(bytes.count) bytes past the \(limit)-byte limit")
        }
        switch (piecewise, atOnce) {
        case (.success(let a), .success(let b)):
            require(a == b, "piecewise and whole inflation disagree (\(a.count) vs \(b.count) bytes)")
        case (_, .failure(.invalidCompressedData)) where windowBits < 15,
             (.failure(.invalidCompressedData), _) where windowBits < 15:
            // See the comment at the top: a distance beyond a small window is caught or not
            // depending on the cut (the lenient side may run on into the size limit instead).
            // Both inflaters dropped their context; stop comparing.
            return 0
        case (.failure(let a), .failure(let b)):
            require(a == b, "piecewise and whole inflation fail differently: \(a) vs \(b)")
        case (.success(let bytes), .failure(let error)):
            fatalError("inflating in \(pieceSize)-byte pieces gives \(bytes.count) bytes, inflating whole fails: \(error)")
        case (.failure(let error), .success(let bytes)):
            fatalError("inflating in \(pieceSize)-byte pieces fails (\(error)), inflating whole gives \(bytes.count) bytes")
        }
        // After a failure both inflaters dropped their context, so they stay comparable.
        if case .failure = piecewise { break }
    }
    require(keepsContext || !pieced.holdsStream, "a no-context inflater holds zlib memory between messages")
    return 0
}

private func inflate(_ message: UnsafeRawBufferPointer, with inflater: MessageInflater,
                     pieceSize: Int) -> Result<[UInt8], ProtocolViolation> {
    var output: [UInt8] = []
    do throws(ProtocolViolation) {
        var offset = 0
        while offset < message.count {
            let end = min(offset + pieceSize, message.count)
            try inflater.inflate(UnsafeRawBufferPointer(rebasing: message[offset..<end]), appendingTo: &output, limit: limit)
            require(output.count <= limit, "inflate grew the output past the limit")
            offset = end
        }
        try inflater.finishMessage(appendingTo: &output, limit: limit)
        return .success(output)
    } catch {
        inflater.abandonMessage()
        return .failure(error)
    }
}
