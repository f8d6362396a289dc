// Connection's reading: reads into the loop's buffer, the PROXY protocol header, TLS decryption
// and handshake, and the end of the stream.
import Forwarding
import Platform

extension Connection {
    // MARK: Reading

    func readable() {
        let buffer = loop.readBuffer
        var total = 0
        while total < options.maxBytesReadPerEvent, state != .closed {
            let count: Int
            do {
                guard let read = try loop.syscalls.read(descriptor, into: buffer) else { return }
                count = read
            } catch {
                tearDown(isCloseRequested ? .localClose : .ioError(error))
                return
            }
            if count == 0 {
                endOfStream()
                return
            }
            total += count
            deliver(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            // A short read almost always means the socket is empty; skip the EAGAIN round trip.
            if count < buffer.count { return }
        }
    }

    private func endOfStream() {
        if case .reading(var parser)? = proxyHeaderState {
            do throws(ProxyHeaderError) {
                try parser.finish()
            } catch {
                tearDown(.proxyHeaderRefused(.invalid(error)))
                return
            }
        }
        tearDown(isCloseRequested ? .localClose : .peerClosed)
    }

    private func deliver(_ bytes: UnsafeRawBufferPointer) {
        // After a close request input is discarded: we only wait for the peer's end of stream.
        guard !isCloseRequested else { return }
        var bytes = bytes
        if state == .awaitingProxyHeader {
            guard let rest = consumeProxyHeader(bytes), !rest.isEmpty else { return }
            bytes = rest
        }
        guard let tls else {
            handler?.connection(self, didReceive: bytes)
            return
        }
        tls.receive(ciphertext: bytes)
        if state == .handshaking {
            advanceHandshake(tls)
            guard state == .open else { return }
        }
        // The ciphertext now lives inside OpenSSL, so the loop buffer can take the plaintext.
        let buffer = loop.readBuffer
        while state == .open {
            switch tls.readPlaintext(into: buffer) {
            case .plaintext(let count):
                handler?.connection(self, didReceive: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            case .needsMoreInput:
                flushTLSOutput()
                return
            case .closedByPeer:
                tearDown(.peerClosed)
                return
            case .failed(let message):
                tearDown(.tlsFailure(TLSFailure(kind: .record, message: message)))
                return
            }
        }
    }

    /// Feeds the PROXY header parser; once the header is complete, starts TLS or opens, and
    /// returns the bytes after the header if the connection still wants them.
    private func consumeProxyHeader(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard case .reading(var parser)? = proxyHeaderState else {
            fatalError("internal inconsistency in Connection: awaiting a PROXY header without a parser")
        }
        let progress: ProxyHeaderParser.Progress
        do throws(ProxyHeaderError) {
            progress = try parser.parse(bytes)
        } catch {
            tearDown(.proxyHeaderRefused(.invalid(error)))
            return nil
        }
        switch progress {
        case .needsMoreData:
            proxyHeaderState = .reading(parser)
            return nil
        case .complete(let header, let consumed):
            proxyHeaderState = .read(header)
            layers?.openingDeadline = Self.noDeadline
            startProtocol()
            guard !isCloseRequested, state == .open || state == .handshaking else { return nil }
            return UnsafeRawBufferPointer(rebasing: bytes[consumed...])
        }
    }

    func advanceHandshake(_ tls: TLSSession) {
        switch tls.advanceHandshake() {
        case .complete:
            flushTLSOutput()
            guard state == .handshaking else { return }
            state = .open
            layers?.openingDeadline = Self.noDeadline
            handler?.connectionDidOpen(self)
        case .needsMoreInput:
            flushTLSOutput()
        case .failed(let failure):
            // OpenSSL has queued an alert saying why (protocol_version, handshake_failure, …):
            // write it before closing, so the peer is told rather than just cut off.
            flushTLSOutput()
            writeQueuedOutput(isWritableEvent: false)
            tearDown(.tlsFailure(failure))
        }
    }

    /// Queues whatever OpenSSL produced on its own (handshake records, tickets, alerts).
    private func flushTLSOutput() {
        guard let tls, state != .closed, let ciphertext = tls.takeCiphertext() else { return }
        _ = enqueue(ciphertext)
    }
}
