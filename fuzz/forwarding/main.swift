// Fuzz target: the PROXY protocol header parser, and the Forwarded / X-Forwarded-For walk.
//
// Input layout: byte 0 is the setup byte. Its top bit picks the mode.
// - 0: the rest is the start of a connection. Bits 0-6 pick where it is split in two (0x7F: one
//   byte at a time). Checks, beyond "no crash": the outcome is the same as feeding it whole,
//   `consumedBytes` lies inside the piece it refers to, an error is sticky, and the end of the
//   stream before the header is complete is `truncated`.
// - 1: the rest is header values, one per line; line n goes to Forwarded, X-Forwarded-For or
//   X-Forwarded-Proto by n % 3 (bit 0 of the setup byte leaves Forwarded out, so the
//   X-Forwarded-For path is reached too). Checks: the client found is the peer or one of the
//   hops, never an IPv4-mapped address, and unidentified only when a hop names no one.
import Forwarding

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private let peer = IPAddress("127.0.0.1")!
private let trusted = TrustedProxies([try! AddressRange(parsing: "127.0.0.0/8"), try! AddressRange(parsing: "10.0.0.0/8"),
                                      try! AddressRange(parsing: "fd00::/8")])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzForwarding(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    if control & 0x80 == 0 {
        fuzzProxyHeader(input, control: control & 0x7F)
    } else {
        fuzzHeaders(input, skipsForwarded: control & 1 != 0)
    }
    return 0
}

private enum Outcome: Equatable {
    case complete(ProxyHeader, consumed: Int)
    case needsMoreData
    case failed(ProxyHeaderError)
}

/// Feeds the pieces in order; `consumed` counts from the start of the whole input.
private func run(_ pieces: [UnsafeBufferPointer<UInt8>]) -> Outcome {
    var parser = ProxyHeaderParser()
    var before = 0
    for piece in pieces {
        do {
            switch try parser.parse(piece) {
            case .needsMoreData:
                before += piece.count
            case .complete(let header, let consumed):
                require((1...piece.count).contains(consumed), "consumedBytes \(consumed) outside 1...\(piece.count)")
                return .complete(header, consumed: before + consumed)
            }
        } catch {
            do {
                _ = try parser.parse(piece)
                fatalError("ProxyHeaderParser accepted input after failing with \(error)")
            } catch let again {
                require(again == error, "ProxyHeaderParser changed its error: \(error) then \(again)")
            }
            return .failed(error)
        }
    }
    do {
        try parser.finish()
        fatalError("ProxyHeaderParser finished without a complete header")
    } catch {
        require(error.kind == .truncated, "the end of the stream gave \(error)")
    }
    return .needsMoreData
}

private func fuzzProxyHeader(_ input: UnsafeBufferPointer<UInt8>, control: UInt8) {
    let whole = run([input])
    let pieces: [UnsafeBufferPointer<UInt8>]
    if control == 0x7F {
        pieces = input.indices.map { UnsafeBufferPointer(rebasing: input[$0...$0]) }
    } else {
        let split = input.isEmpty ? 0 : Int(control) * input.count / 126
        pieces = [UnsafeBufferPointer(rebasing: input[..<min(split, input.count)]),
                  UnsafeBufferPointer(rebasing: input[min(split, input.count)...])]
    }
    let split = run(pieces.filter { !$0.isEmpty })
    require(split == whole, "the outcome depends on the split: \(split) vs \(whole)")
    if case .complete(let header, let consumed) = whole {
        switch header.version {
        case .one: require(consumed <= 107, "a v1 line of \(consumed) bytes")
        case .two: require(consumed >= 16 && consumed <= 16 + ProxyHeaderParser.maximumV2Length, "a v2 header of \(consumed) bytes")
        }
        _ = ClientOrigin(peer: peer, proxyHeader: header, connectionUsesTLS: false).isLoopback
    }
}

private func fuzzHeaders(_ input: UnsafeBufferPointer<UInt8>, skipsForwarded: Bool) {
    var headers = ForwardingHeaders()
    for (index, line) in input.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
        let value = String(decoding: line, as: UTF8.self)
        switch index % 3 {
        case 0: if !skipsForwarded { headers.forwarded.append(value) }
        case 1: headers.xForwardedFor.append(value)
        default: headers.xForwardedProto.append(value)
        }
    }
    let direct = ClientOrigin(peer: peer, proxyHeader: nil, connectionUsesTLS: false)
    guard let origin = try? direct.resolved(by: headers, trusting: trusted) else { return }
    require(origin.address == origin.address.unmapped, "a mapped client address \(origin.address)")
    let hops = (try? headers.forwarded.isEmpty
        ? XForwardedFor.parse(forwardedFor: headers.xForwardedFor, proto: headers.xForwardedProto)
        : ForwardedHeader.parse(headers.forwarded)) ?? []
    let addresses = hops.compactMap { hop -> IPAddress? in
        if case .address(let address) = hop.node { return address.unmapped }
        return nil
    }
    require(origin.address == peer || addresses.contains(origin.address), "the client \(origin.address) is neither the peer nor a hop")
    if !origin.isIdentified {
        require(hops.contains { $0.node == .unidentified }, "unidentified without a hop that names no one")
    }
    if origin.isIdentified, origin.source != .direct, let nearestUntrusted = addresses.last(where: { !trusted.contains($0) }) {
        // The walk stops at the first untrusted address from the right, or earlier at a hop naming no one.
        let index = addresses.lastIndex(of: nearestUntrusted)!
        require(addresses[index...].contains(origin.address), "the walk went past the first untrusted hop")
    }
}
