// The Apple-platform transport: URLSessionWebSocketTask behind the same small TransportChannel
// the Linux transport implements. URLSession does the TLS and the WebSocket protocol (it
// answers pings and the close handshake itself); this file only adapts its callbacks to the
// channel's events, and checks the server's certificate against a private CA and a given name
// when the endpoint asks for that. It compiles only on Apple platforms and is not exercised by
// this repository's tests, which run on Linux.
#if canImport(Darwin)
import Foundation
import Security

/// WebSocket channels over URLSession.
public final class URLSessionTransport: WebSocketTransport {
    public init() {}

    public func connect(to endpoint: ServerEndpoint) async throws(TransportError) -> any TransportChannel {
        let channel = URLSessionChannel(endpoint: endpoint)
        try await channel.open()
        return channel
    }
}

/// One URLSessionWebSocketTask. Confinement: `lock` guards `opening` and `isOver`; URLSession
/// calls the delegate on its own serial queue.
final class URLSessionChannel: NSObject, TransportChannel, URLSessionWebSocketDelegate, @unchecked Sendable {
    let events: AsyncStream<TransportEvent>
    private let sink: AsyncStream<TransportEvent>.Continuation
    private let endpoint: ServerEndpoint
    private let lock = NSLock()
    private var opening: CheckedContinuation<Result<Void, TransportError>, Never>?
    private var isOver = false
    private var session: URLSession?
    private var task: URLSessionWebSocketTask?

    init(endpoint: ServerEndpoint) {
        self.endpoint = endpoint
        (events, sink) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        super.init()
    }

    func open() async throws(TransportError) {
        guard let url = URL(string: endpoint.url.description) else { throw TransportError("not a URL: \(endpoint.url)") }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Double(endpoint.connectTimeout.components.seconds)
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        let task = session.webSocketTask(with: url, protocols: ["bangbang.v1"])
        task.maximumMessageSize = 16 << 20
        self.session = session
        self.task = task
        let result = await withCheckedContinuation { continuation in
            lock.withLock { opening = continuation }
            task.resume()
        }
        try result.get()
        receiveNext()
    }

    private func finishOpening(_ result: Result<Void, TransportError>) {
        let opening: CheckedContinuation<Result<Void, TransportError>, Never>? = lock.withLock {
            defer { self.opening = nil }
            return self.opening
        }
        opening?.resume(returning: result)
    }

    private func end(code: UInt16?, reason: String) {
        let wasOpen = lock.withLock {
            defer { isOver = true }
            return !isOver
        }
        guard wasOpen else { return }
        finishOpening(.failure(TransportError("cannot reach \(endpoint.url.hostHeader): \(reason)")))
        sink.yield(.closed(code: code, reason: reason))
        sink.finish()
        session?.finishTasksAndInvalidate()
    }

    private func receiveNext() {
        task?.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                sink.yield(.text(Array(text.utf8)))
                receiveNext()
            case .success:
                receiveNext()
            case .failure(let error):
                end(code: task.map { $0.closeCode == .invalid ? nil : UInt16($0.closeCode.rawValue) } ?? nil,
                    reason: error.localizedDescription)
            }
        }
    }

    // MARK: TransportChannel

    func send(text: [UInt8]) {
        task?.send(.string(String(decoding: text, as: UTF8.self))) { [weak self] error in
            if let error { self?.end(code: nil, reason: error.localizedDescription) }
        }
    }

    func ping() {
        task?.sendPing { [weak self] error in
            if error == nil { self?.sink.yield(.pong) }
        }
    }

    func close() { task?.cancel(with: .normalClosure, reason: nil) }

    func abort() {
        task?.cancel()
        end(code: nil, reason: "dropped")
    }

    // MARK: URLSessionWebSocketDelegate

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        finishOpening(.success(()))
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        end(code: UInt16(closeCode.rawValue), reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        end(code: nil, reason: error?.localizedDescription ?? "closed")
    }

    /// A private CA (`trustedCertificatePaths`) and a name other than the URL's host
    /// (`serverName`) are checked here; otherwise the system's own evaluation applies.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
              let trust = challenge.protectionSpace.serverTrust,
              !endpoint.trustedCertificatePaths.isEmpty || endpoint.serverName != nil else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        let name = endpoint.serverName ?? endpoint.url.host
        SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, name as CFString))
        let anchors = endpoint.trustedCertificatePaths.flatMap(Self.certificates(inPEMFile:))
        if !anchors.isEmpty {
            SecTrustSetAnchorCertificates(trust, anchors as CFArray)
            SecTrustSetAnchorCertificatesOnly(trust, !endpoint.usesSystemTrustStore)
        }
        if SecTrustEvaluateWithError(trust, nil) {
            completionHandler(.useCredential, URLCredential(trust: trust))
        } else {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }

    /// The certificates of a PEM file.
    static func certificates(inPEMFile path: String) -> [SecCertificate] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var certificates: [SecCertificate] = []
        var rest = Substring(text)
        while let start = rest.range(of: begin), let stop = rest.range(of: end, range: start.upperBound..<rest.endIndex) {
            let body = rest[start.upperBound..<stop.lowerBound]
            if let der = Data(base64Encoded: String(body), options: .ignoreUnknownCharacters),
               let certificate = SecCertificateCreateWithData(nil, der as CFData) {
                certificates.append(certificate)
            }
            rest = rest[stop.upperBound...]
        }
        return certificates
    }
}
#endif
