// The web app and the operator console as the server serves them: an immutable table of files
// held in memory, and the one function that answers a GET or HEAD from it. Pure, like the
// protocol code: `StaticSiteLoader` reads the folder once (at start and on SIGHUP), and a
// request never reaches the file system, so nothing a client sends can name a file outside the
// table.
//
// Every answer, errors included, carries the page security headers: a Content-Security-Policy
// that allows only this origin's scripts, styles and WebSocket and no inline code, no framing,
// `nosniff`, and no Referer. Files are revalidated on every use (`no-cache` + a strong ETag
// per encoding): the app's ES modules have no fingerprinted names, so a cache that kept one
// module across a deploy could mix versions; a 304 costs one small round trip.
import BangbangApplication
import WebSocketProtocol
import WebSocketServer

package struct StaticFile: Sendable {
    let contentType: String
    let body: [UInt8]
    /// The gzip encoding of `body`, when the type compresses and the result is smaller.
    let gzippedBody: [UInt8]?
    /// A strong validator of `body`; the gzip encoding's tag is this one with "-gz" inside.
    let entityTag: String

    var gzippedEntityTag: String { String(entityTag.dropLast()) + "-gz\"" }
}

package struct StaticSite: StaticContent {
    /// By path relative to the web folder ("index.html", "admin/index.html", "js/app.js").
    let files: [String: StaticFile]

    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
             + "font-src 'self'; manifest-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
             + "frame-ancestors 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Permissions-Policy", "camera=(), microphone=(), geolocation=()"),
    ]

    package func response(for head: HTTPRequestHead) -> HTTPResponse {
        guard head.method == "GET" || head.method == "HEAD" else {
            return Self.decorated(.rejection(status: 405, reason: "only GET and HEAD are served"))
        }
        let path: WebPath
        do {
            path = try WebPath.resolve(head.path)
        } catch {
            switch error {
            case .tooLong: return Self.decorated(.rejection(status: 414, reason: "the path is too long"))
            case .malformed(let why): return Self.decorated(.rejection(status: 400, reason: "bad path: \(why)"))
            }
        }
        guard !path.isHidden, let file = files[path.relativePath] else {
            if !path.isHidden, !path.relativePath.hasSuffix("index.html"), files[path.relativePath + "/index.html"] != nil {
                return Self.decorated(HTTPResponse(status: 301, headers: ["Location": String(head.path) + "/",
                                                                          "Cache-Control": "no-cache"]))
            }
            return Self.decorated(.rejection(status: 404, reason: "no such file"))
        }
        return Self.decorated(answer(file, for: head))
    }

    private func answer(_ file: StaticFile, for head: HTTPRequestHead) -> HTTPResponse {
        let useGzip = file.gzippedBody != nil && ContentNegotiation.acceptsGzip(head.headers)
        let tag = useGzip ? file.gzippedEntityTag : file.entityTag
        var headers: HTTPHeaders = ["ETag": tag, "Cache-Control": "no-cache"]
        if file.gzippedBody != nil { headers.append(name: "Vary", value: "Accept-Encoding") }
        if ContentNegotiation.noneMatch(head.headers, tag: tag) == false {
            return HTTPResponse(status: 304, headers: headers)
        }
        headers.append(name: "Content-Type", value: file.contentType)
        if useGzip { headers.append(name: "Content-Encoding", value: "gzip") }
        return HTTPResponse(status: 200, headers: headers, body: useGzip ? file.gzippedBody! : file.body)
    }

    private static func decorated(_ response: HTTPResponse) -> HTTPResponse {
        var response = response
        for (name, value) in securityHeaders { response.headers.append(name: name, value: value) }
        if response.status >= 400 { response.headers.replaceOrAppend(name: "Cache-Control", value: "no-store") }
        // A missing file or a wrong method is a well-formed request: the connection can serve
        // the next one. A malformed target ends it, like any malformed request.
        if response.status == 404 || response.status == 405 { response.headers.removeAll(named: "Connection") }
        return response
    }
}

/// The two request fields a static answer depends on (RFC 9110 §12.5.3, §13.1.2).
package enum ContentNegotiation {
    /// Whether `Accept-Encoding` allows gzip: listed (or `*` listed) with a non-zero weight.
    static func acceptsGzip(_ headers: HTTPHeaders) -> Bool {
        var wildcard = false
        for element in headers.listElements(named: "Accept-Encoding") {
            let parts = element.split(separator: ";", maxSplits: 1)
            let coding = trimmed(parts[0]).lowercased()
            let allowed = parts.count < 2 || !isZeroWeight(parts[1])
            if coding == "gzip" || coding == "x-gzip" { return allowed }
            if coding == "*" { wildcard = allowed }
        }
        return wildcard
    }

    /// nil without `If-None-Match`; false when it lists `tag` (weakly compared) or `*`.
    static func noneMatch(_ headers: HTTPHeaders, tag: String) -> Bool? {
        let elements = headers.listElements(named: "If-None-Match")
        guard !elements.isEmpty else { return nil }
        return !elements.contains { $0 == "*" || ($0.hasPrefix("W/") ? $0.dropFirst(2) : $0) == tag }
    }

    private static func isZeroWeight(_ parameter: Substring) -> Bool {
        let text = trimmed(parameter)
        guard text.lowercased().hasPrefix("q=") else { return false }
        return Double(text.dropFirst(2)) == 0
    }

    private static func trimmed(_ text: Substring) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isSpace($0) }),
              let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
        return text[first...last]
    }
}
