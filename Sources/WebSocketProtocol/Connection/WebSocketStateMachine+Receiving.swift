// WebSocketStateMachine's receiving of frames: each decoder event handled in order, data unmasked
// (and inflated) into the message buffer and validated, control frames, and the peer's close.

extension WebSocketStateMachine {
    // MARK: Receiving frames

    mutating func handle(_ event: FrameDecoderEvent, into output: inout WebSocketOutput,
                         maskingKeys: MaskingKeySource?) throws(ProtocolViolation) {
        switch event {
        case .header(let header):
            currentFrame = FrameInProgress(header)
            switch header.opcode {
            case .close, .ping, .pong:
                controlBuffer = []
            case .text, .binary:
                incoming = IncomingMessage(isText: header.opcode == .text, isCompressed: header.isCompressed)
                utf8.reset()
                if isOpen && !header.isCompressed {
                    // One exact allocation for the common single-frame message.
                    messageBuffer.reserveCapacity(header.payloadLength)
                }
            case .continuation:
                // No exact reservation here: growing by exactly each fragment would copy the
                // message once per fragment. Appending grows geometrically instead.
                break
            }

        case .payload(let piece, let phase):
            guard let header = currentFrame else {
                fatalError("internal inconsistency in WebSocketConnection: payload without a header")
            }
            if header.opcode.isControl {
                let start = controlBuffer.count
                controlBuffer.append(contentsOf: piece)
                header.maskingKey?.apply(to: &controlBuffer, range: start..<controlBuffer.count, phase: phase)
            } else if isOpen {
                try receiveDataPiece(piece, phase: phase, key: header.maskingKey)
            }

        case .frameEnd:
            guard let header = currentFrame else {
                fatalError("internal inconsistency in WebSocketConnection: frame end without a header")
            }
            currentFrame = nil
            switch header.opcode {
            case .ping:
                // The payload goes to the event; the connection keeps no buffer between frames.
                var payload: [UInt8] = []
                swap(&payload, &controlBuffer)
                guard isOpen else { return }
                if shared.configuration.repliesToPings {
                    payload.withUnsafeBytes {
                        appendFrame(.pong, payload: $0, isCompressed: false, into: &output, maskingKeys: maskingKeys)
                    }
                }
                output.events.append(.ping(payload))
            case .pong:
                var payload: [UInt8] = []
                swap(&payload, &controlBuffer)
                guard isOpen else { return }
                output.events.append(.pong(payload))
            case .close:
                try receiveClose(into: &output, maskingKeys: maskingKeys)
            case .text, .binary, .continuation:
                if header.isFinal { try finishMessage(into: &output) }
            }
        }
    }

    private mutating func receiveDataPiece(_ piece: UnsafeRawBufferPointer, phase: Int, key: MaskingKey?)
        throws(ProtocolViolation)
    {
        guard let message = incoming else {
            fatalError("internal inconsistency in WebSocketConnection: data without a message")
        }
        let start = messageBuffer.count
        if message.isCompressed {
            guard let inflater else {
                fatalError("internal inconsistency in WebSocketConnection: compressed frame without deflate")
            }
            let limit = shared.configuration.maxMessageSize
            if let key {
                try inflateMasked(piece, key: key, phase: phase, with: inflater, limit: limit)
            } else {
                try inflater.inflate(piece, appendingTo: &messageBuffer, limit: limit)
            }
        } else {
            messageBuffer.append(contentsOf: piece)
            key?.apply(to: &messageBuffer, range: start..<messageBuffer.count, phase: phase)
        }
        if message.isText && !utf8.validate(messageBuffer[start...]) { throw .invalidUTF8 }
    }

    /// Unmasks `piece` a stack buffer at a time and inflates each part into the message, so no
    /// unmasked copy of it is kept.
    private mutating func inflateMasked(_ piece: UnsafeRawBufferPointer, key: MaskingKey, phase: Int,
                               with inflater: MessageInflater, limit: Int) throws(ProtocolViolation) {
        var remaining = piece
        var phase = phase
        while !remaining.isEmpty {
            let count = min(remaining.count, Self.unmaskingChunkSize)
            let outcome = withUnsafeTemporaryAllocation(byteCount: count, alignment: 8) { buffer in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: remaining[..<count]))
                phase = key.apply(to: buffer, phase: phase)
                return Result { () throws(ProtocolViolation) in
                    try inflater.inflate(UnsafeRawBufferPointer(buffer), appendingTo: &messageBuffer, limit: limit)
                }
            }
            try outcome.get()
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
        }
    }

    private mutating func finishMessage(into output: inout WebSocketOutput) throws(ProtocolViolation) {
        guard let message = incoming else {
            fatalError("internal inconsistency in WebSocketConnection: message end without a message")
        }
        incoming = nil
        guard isOpen else { return }
        if message.isCompressed {
            guard let inflater else {
                fatalError("internal inconsistency in WebSocketConnection: compressed frame without deflate")
            }
            let start = messageBuffer.count
            try inflater.finishMessage(appendingTo: &messageBuffer, limit: shared.configuration.maxMessageSize)
            if message.isText && !utf8.validate(messageBuffer[start...]) { throw .invalidUTF8 }
        }
        if message.isText && !utf8.isComplete { throw .invalidUTF8 }
        var payload: [UInt8] = []
        swap(&payload, &messageBuffer)
        output.events.append(message.isText ? .text(payload) : .binary(payload))
    }

    private mutating func receiveClose(into output: inout WebSocketOutput, maskingKeys: MaskingKeySource?)
        throws(ProtocolViolation)
    {
        let code: CloseCode?
        let reason: String
        switch controlBuffer.count {
        case 0:
            code = nil
            reason = ""
        case 1:
            throw .truncatedCloseCode
        default:
            let received = CloseCode(rawValue: UInt16(controlBuffer[0]) << 8 | UInt16(controlBuffer[1]))
            guard received.isValidOnWire else { throw .invalidCloseCode(received.rawValue) }
            let reasonBytes = controlBuffer[2...]
            guard reasonBytes.withUnsafeBytes({ UTF8Validator.isValid($0) }) else { throw .invalidUTF8 }
            code = received
            reason = String(decoding: reasonBytes, as: UTF8.self)
        }
        switch state {
        case .open:
            // Echo the peer's code (RFC 6455 §5.5.1), or an empty close if it sent none.
            if let code {
                appendClose(code: code, reason: "", into: &output, maskingKeys: maskingKeys)
            } else {
                appendFrame(.close, payload: UnsafeRawBufferPointer(start: nil, count: 0), isCompressed: false,
                            into: &output, maskingKeys: maskingKeys)
            }
            finish(.closed(code: code ?? .noStatusReceived, reason: reason, initiatedByPeer: true), into: &output)
        case .closeSent(let ourCode, let ourReason):
            finish(.closed(code: ourCode, reason: ourReason, initiatedByPeer: false), into: &output)
        case .closed, .failed:
            fatalError("internal inconsistency in WebSocketConnection: frame processed after close")
        }
    }
}
