// Fuzz target: the relay's envelope decoder (RelayProtocol).
//
// The first byte picks the direction (even: to the owner, odd: to a gateway); the rest is one
// NATS payload. Invariants, beyond "no crash and no sanitizer report":
//   - an envelope that decodes encodes back to exactly the bytes it came from (one wire form
//     per envelope: nothing is accepted that the encoder would not write);
//   - a decoded `deliver` names at least one connection and a close reason fits a close frame;
//   - the decoder gives the same answer for the input copied into a slice that does not start
//     at index 0.
import RelayProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelayProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let direction: RelayDirection = data[0] % 2 == 0 ? .toOwner : .toGateway
    let payload = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let decoded = Result { () throws(RelayProtocolError) in try RelayCodec.decode(payload, travelling: direction) }
    let shifted = [0xAA] + payload
    let again = Result { () throws(RelayProtocolError) in try RelayCodec.decode(shifted[1...], travelling: direction) }
    switch (decoded, again) {
    case (.success(let first), .success(let second)):
        require(first == second, "the slice's start index changed the envelope")
    case (.failure(let first), .failure(let second)):
        require(first == second, "the slice's start index changed the error")
    default:
        require(false, "the slice's start index changed the outcome")
    }
    guard case .success(let envelope) = decoded else { return 0 }
    for frame in envelope.frames {
        switch frame {
        case .deliver(let connections, _):
            require(!connections.isEmpty, "a deliver to no connection decoded")
        case .closeConnection(_, _, let reason):
            require(reason.utf8.count <= RelayCodec.maxCloseReasonBytes, "a close reason longer than a close frame holds")
        default:
            break
        }
    }
    require(RelayCodec.encode(envelope) == payload, "an envelope did not encode back to its bytes")
    return 0
}
