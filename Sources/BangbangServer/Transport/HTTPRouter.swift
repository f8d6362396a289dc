// Decides what a request gets: a WebSocket endpoint (with its limits) for the upgrade paths,
// or a plain HTTP response: health and metrics, else a file of the web app. Built once by the server; called on connection queues.
import SocketServer
import WebSocketProtocol

struct WebSocketRoute: Sendable {
    var configuration: WebSocketConfiguration
    /// Called on the connection's loop, with it.
    var makeEndpoint: @Sendable (EventLoop) -> WebSocketEndpoint
    /// Checked for each valid upgrade before the 101: a response refuses it (a cluster node
    /// while nobody owns the partition answers 503).
    var refusal: @Sendable () -> HTTPResponse? = { nil }
}

struct HTTPRouter: Sendable {
    var webSocketRoutes: [String: WebSocketRoute]
    var handshake: ServerHandshakeConfiguration
    /// Plain HTTP paths (`/healthz`, `/metrics` …) → response builders.
    var plainRoutes: [String: @Sendable () -> HTTPResponse]
    /// The web app and console, for every other path; nil when not served (`--no-web`).
    var staticSite: @Sendable () -> StaticSite? = { nil }

    func plainResponse(for head: HTTPRequestHead) -> HTTPResponse {
        let path = String(head.path)
        if plainRoutes[path] == nil, webSocketRoutes[path] == nil, let site = staticSite() {
            return site.response(for: head)
        }
        guard head.method == "GET" || head.method == "HEAD" else {
            return .rejection(status: 405, reason: "only GET and HEAD are served")
        }
        if let route = plainRoutes[path] { return route() }
        if webSocketRoutes[path] != nil {
            return .rejection(status: 426, reason: "this path speaks WebSocket only")
        }
        return .rejection(status: 404, reason: "no such path")
    }
}
