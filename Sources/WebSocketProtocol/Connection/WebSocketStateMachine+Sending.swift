// WebSocketStateMachine's sending of frames: messages compressed when deflate was agreed, close
// frames, and every frame masked with a fresh key on a client.

extension WebSocketStateMachine {
    // MARK: Sending frames

    mutating func send(_ opcode: Opcode, payload: UnsafeRawBufferPointer, into output: inout WebSocketOutput,
                       maskingKeys: MaskingKeySource?) -> Bool {
        guard isOpen else { return false }
        if let deflater {
            // Compressed into the output's scratch buffer, taken out while the frame is appended.
            var compressed: [UInt8] = []
            swap(&compressed, &output.compressionScratch)
            compressed.removeAll(keepingCapacity: true)
            deflater.compress(payload, appendingTo: &compressed)
            compressed.withUnsafeBytes {
                appendFrame(opcode, payload: $0, isCompressed: true, into: &output, maskingKeys: maskingKeys)
            }
            swap(&compressed, &output.compressionScratch)
        } else {
            appendFrame(opcode, payload: payload, isCompressed: false, into: &output, maskingKeys: maskingKeys)
        }
        return true
    }

    func appendClose(code: CloseCode, reason: String, into output: inout WebSocketOutput,
                     maskingKeys: MaskingKeySource?) {
        var payload = (UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue))
        let reasonBytes = reason.utf8
        if reasonBytes.isEmpty {
            withUnsafeBytes(of: &payload) {
                appendFrame(.close, payload: $0, isCompressed: false, into: &output, maskingKeys: maskingKeys)
            }
        } else {
            var bytes: [UInt8] = [payload.0, payload.1]
            bytes.append(contentsOf: reasonBytes)
            bytes.withUnsafeBytes {
                appendFrame(.close, payload: $0, isCompressed: false, into: &output, maskingKeys: maskingKeys)
            }
        }
    }

    func appendFrame(_ opcode: Opcode, payload: UnsafeRawBufferPointer, isCompressed: Bool,
                     into output: inout WebSocketOutput, maskingKeys: MaskingKeySource?) {
        // Clients mask every frame with a fresh key (RFC 6455 §5.3); servers never mask.
        let key: MaskingKey?
        switch role {
        case .server:
            key = nil
        case .client:
            guard let maskingKeys else { preconditionFailure("a client WebSocket needs its masking keys to send") }
            key = maskingKeys.next()
        }
        FrameEncoder.appendFrame(opcode: opcode, isCompressed: isCompressed, payload: payload, maskingKey: key,
                                 to: &output.outbound)
    }
}
