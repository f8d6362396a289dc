// What a plain request gets from the router: a plain route, the site's files, or the refusal
// that says why not.
import Testing
import WebSocketProtocol
@testable import WebSocketServer

@Suite struct HTTPRouterTests {
    struct Site: StaticContent {
        func response(for head: HTTPRequestHead) -> HTTPResponse {
            .plain(body: Array("file \(head.path)".utf8))
        }
    }

    func router(site: (any StaticContent)? = nil) -> HTTPRouter {
        HTTPRouter(webSocketRoutes: ["/echo": WebSocketRoute(configuration: .echo, makeEndpoint: { _ in EchoEndpoint() })],
                   handshake: ServerHandshakeConfiguration(),
                   plainRoutes: ["/healthz": { .plain(body: Array("ok\n".utf8)) }],
                   staticSite: { site })
    }

    func answer(_ router: HTTPRouter, _ method: String, _ target: String) -> (status: Int, body: String) {
        let response = router.plainResponse(for: HTTPRequestHead(method: method, target: target))
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    @Test func aPlainRouteAnswersGetAndHeadOnly() {
        #expect(answer(router(), "GET", "/healthz") == (200, "ok\n"))
        #expect(answer(router(), "HEAD", "/healthz").status == 200)
        #expect(answer(router(), "POST", "/healthz").status == 405)
    }

    @Test func aWebSocketPathAskedWithoutAnUpgradeIs426() {
        #expect(answer(router(), "GET", "/echo").status == 426)
        #expect(answer(router(site: Site()), "GET", "/echo").status == 426)
    }

    @Test func anyOtherPathIs404WithoutASiteAndTheSitesAnswerWithOne() {
        #expect(answer(router(), "GET", "/index.html").status == 404)
        #expect(answer(router(site: Site()), "GET", "/index.html") == (200, "file /index.html"))
        #expect(answer(router(site: Site()), "POST", "/index.html") == (200, "file /index.html"),
                "the site decides which methods it serves")
    }

    @Test func routesAreNotHandedToTheSite() {
        #expect(answer(router(site: Site()), "GET", "/healthz") == (200, "ok\n"))
    }
}
