// Fuzz target: the server's request-head parser and the handshake verdict on what it parses.
//
// Input layout: byte 0 picks where the rest is split (so the parser sees the head in two
// arbitrary pieces, as a socket would deliver it); bytes 1... are the request. Checks, beyond
// "no crash": `consumedBytes` lies inside the piece it refers to, an error is sticky, and a
// WebSocket upgrade always comes with a serialized 101.
import WebSocketProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

private let configuration = ServerHandshakeConfiguration(
    subprotocols: ["bangbang.v1", "chat"],
    originPolicy: ServerHandshakeConfiguration.allowingOrigins(["https://bangbang.example"], allowingMissing: true))

private let smallLimits = HTTPParserLimits(maximumStartLineLength: 64, maximumHeaderBlockSize: 256,
                                           maximumHeaderCount: 4)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let input = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let split = input.isEmpty ? 0 : Int(control & 0x7F) * input.count / 127
    // The top bit chooses tiny limits, so limit boundaries are crossed at every position.
    let limits = control & 0x80 == 0 ? HTTPParserLimits() : smallLimits
    var parser = HTTPRequestParser(limits: limits)
    var pieces = [UnsafeBufferPointer(rebasing: input[..<split]), UnsafeBufferPointer(rebasing: input[split...])]
    if control == 0xFF {
        // One byte at a time: the most splits there can be.
        pieces = input.indices.map { UnsafeBufferPointer(rebasing: input[$0...$0]) }
    }
    for piece in pieces {
        let progress: HTTPParseProgress<HTTPRequestHead>
        do {
            progress = try parser.parse(piece)
        } catch {
            // A failed parser must keep failing with the same error.
            do {
                _ = try parser.parse(piece)
                fatalError("HTTPRequestParser accepted input after failing with \(error)")
            } catch let again {
                require(again == error, "HTTPRequestParser changed its error: \(error) then \(again)")
            }
            _ = error.response
            return 0
        }
        switch progress {
        case .needsMoreData:
            continue
        case .complete(let head, let consumed):
            require((1...piece.count).contains(consumed), "consumedBytes \(consumed) outside 1...\(piece.count)")
            evaluate(head)
            return 0
        }
    }
    return 0
}

private func evaluate(_ head: HTTPRequestHead) {
    _ = head.path
    _ = head.query
    switch ServerHandshake.evaluate(head, configuration: configuration) {
    case .upgrade(let upgrade):
        require(upgrade.response.status == 101, "an upgrade must answer 101")
        require(upgrade.responseBytes.starts(with: Array("HTTP/1.1 101 ".utf8)), "malformed 101")
        if let subprotocol = upgrade.subprotocol {
            require(configuration.subprotocols.contains(subprotocol), "selected an unsupported subprotocol")
        }
        // The 101 must parse with our own client-side parser.
        var responseParser = HTTPResponseParser()
        guard case .complete(let response, let consumed)? = try? responseParser.parse(upgrade.responseBytes),
              consumed == upgrade.responseBytes.count, response.status == 101
        else { fatalError("the server's 101 does not parse as one response head") }
    case .reject(let response):
        require((400...499).contains(response.status), "rejection with status \(response.status)")
        _ = response.serialized()
    case .notWebSocket:
        break
    }
}
