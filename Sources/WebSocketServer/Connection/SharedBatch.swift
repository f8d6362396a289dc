// Several shared messages that many connections of one loop are sent together, in order: one
// loop turn's board changes as one view of the board sees them. The batch frames them at most
// once per deflate variant (`SharedMessage.frame(for:)`) and gathers the frames into one
// `SharedOutput`, so each recipient costs one gathered write from the same vectors.
import SocketServer
import WebSocketProtocol

/// Confined to the loop that made it, like the `SharedOutput`s it builds.
package final class SharedBatch {
    package let messages: [SharedMessage]
    private var plain: SharedOutput?
    private var compressed: [Int: SharedOutput] = [:]

    /// `messages` must not be empty.
    package init(_ messages: [SharedMessage]) {
        precondition(!messages.isEmpty, "a shared batch needs at least one message")
        self.messages = messages
    }

    /// The frames for a connection with these negotiated parameters, gathered once per variant.
    package func output(for deflate: DeflateParameters?) -> SharedOutput {
        guard let deflate, messages.contains(where: { $0.payload.count >= SharedMessage.compressionThreshold }) else {
            if let plain { return plain }
            let made = SharedOutput(chunks: messages.map(\.plainFrame))
            plain = made
            return made
        }
        let windowBits = deflate.serverMaxWindowBits
        if let output = compressed[windowBits] { return output }
        let made = SharedOutput(chunks: messages.map { $0.frame(for: deflate) })
        compressed[windowBits] = made
        return made
    }
}
