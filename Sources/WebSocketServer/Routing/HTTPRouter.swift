// Decides what a request gets: a WebSocket endpoint (with its limits) for the upgrade paths,
// or a plain HTTP response: health and metrics, else the site's files (the server's web app).
// Built once by the server; called on connection queues.
import SocketServer
import WebSocketProtocol

/// One upgrade path; a class, so a connection waiting for its first message holds it as one word.
package final class WebSocketRoute: Sendable {
    /// The limits of every connection upgraded on this route, held once for all of them.
    package let configuration: WebSocketConfiguration.Shared
    /// Called on the connection's loop, with it.
    package let makeEndpoint: @Sendable (EventLoop) -> WebSocketEndpoint
    /// Checked for each valid upgrade before the 101: a response refuses it (a cluster node
    /// while nobody owns the partition answers 503).
    package let refusal: @Sendable () -> HTTPResponse?
    /// The endpoint is made when the first message arrives instead of at the upgrade: a client
    /// that connects and stays silent costs the connection only, not an endpoint's state too.
    /// For endpoints that have nothing to do before a client speaks.
    package let opensEndpointAtFirstMessage: Bool

    package init(configuration: WebSocketConfiguration, opensEndpointAtFirstMessage: Bool = false,
                 makeEndpoint: @escaping @Sendable (EventLoop) -> WebSocketEndpoint,
                 refusal: @escaping @Sendable () -> HTTPResponse? = { nil }) {
        self.configuration = WebSocketConfiguration.Shared(configuration)
        self.opensEndpointAtFirstMessage = opensEndpointAtFirstMessage
        self.makeEndpoint = makeEndpoint
        self.refusal = refusal
    }
}

/// What answers GET and HEAD for every path no route claims: the server's web app.
package protocol StaticContent: Sendable {
    func response(for head: HTTPRequestHead) -> HTTPResponse
}

package struct HTTPRouter: Sendable {
    package var webSocketRoutes: [String: WebSocketRoute]
    package var handshake: ServerHandshakeConfiguration
    /// Plain HTTP paths (`/healthz`, `/metrics` …) → response builders.
    package var plainRoutes: [String: @Sendable () -> HTTPResponse]
    /// The files for every other path; nil when not served (`--no-web`).
    package var staticSite: @Sendable () -> (any StaticContent)?

    package init(webSocketRoutes: [String: WebSocketRoute], handshake: ServerHandshakeConfiguration,
                 plainRoutes: [String: @Sendable () -> HTTPResponse],
                 staticSite: @escaping @Sendable () -> (any StaticContent)? = { nil }) {
        self.webSocketRoutes = webSocketRoutes
        self.handshake = handshake
        self.plainRoutes = plainRoutes
        self.staticSite = staticSite
    }

    package func plainResponse(for head: HTTPRequestHead) -> HTTPResponse {
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
