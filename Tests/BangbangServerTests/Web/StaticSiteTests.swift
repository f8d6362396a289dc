import CZlib
import Testing
import WebSocketProtocol
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct StaticSiteTests {
    static let script = Array(String(repeating: "export const greeting = 'hello';\n", count: 40).utf8)
    static let site = StaticSite(files: [
        "index.html": StaticSiteLoader.makeFile(Array("<!doctype html><title>app</title>".utf8),
                                                contentType: "text/html; charset=utf-8", compresses: true),
        "admin/index.html": StaticSiteLoader.makeFile(Array("<!doctype html>console".utf8),
                                                      contentType: "text/html; charset=utf-8", compresses: true),
        "js/app.js": StaticSiteLoader.makeFile(script, contentType: "text/javascript; charset=utf-8", compresses: true),
        "img/logo.png": StaticSiteLoader.makeFile([0x89, 0x50, 0x4E, 0x47], contentType: "image/png", compresses: false),
    ])

    private func get(_ target: String, method: String = "GET", _ fields: [(String, String)] = []) -> HTTPResponse {
        var headers: HTTPHeaders = ["Host": "campus.example"]
        for (name, value) in fields { headers.append(name: name, value: value) }
        return Self.site.response(for: HTTPRequestHead(method: method, target: target, headers: headers))
    }

    private func expectSecurityHeaders(_ response: HTTPResponse, sourceLocation: SourceLocation = #_sourceLocation) {
        let policy = response.headers["Content-Security-Policy"] ?? ""
        for directive in ["default-src 'self'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
                          "frame-ancestors 'none'"] {
            #expect(policy.contains(directive), "\(directive)", sourceLocation: sourceLocation)
        }
        #expect(!policy.contains("unsafe-inline"), sourceLocation: sourceLocation)
        #expect(response.headers["X-Content-Type-Options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(response.headers["Referrer-Policy"] == "no-referrer", sourceLocation: sourceLocation)
    }

    @Test func aFileComesWithItsTypeValidatorAndSecurityHeaders() {
        let response = get("/")
        #expect(response.status == 200)
        #expect(response.body == Array("<!doctype html><title>app</title>".utf8))
        #expect(response.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(response.headers["Cache-Control"] == "no-cache")
        #expect(response.headers["ETag"]?.hasPrefix("\"") == true)
        #expect(response.headers["Connection"] == nil)
        expectSecurityHeaders(response)
        #expect(get("/js/app.js?v=3").headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(get("/img/logo.png").headers["Content-Type"] == "image/png")
    }

    @Test func headAnswersLikeGet() {
        let head = get("/js/app.js", method: "HEAD")
        let get = get("/js/app.js")
        #expect(head.status == 200)
        #expect(head.headers == get.headers)
        #expect(head.serialized(includingBody: false).count < get.serialized().count)
    }

    @Test func otherMethodsAre405WithAllow() {
        for method in ["POST", "PUT", "DELETE", "OPTIONS", "get"] {
            let response = get("/", method: method)
            #expect(response.status == 405, "\(method)")
            #expect(response.headers["Allow"] == "GET, HEAD")
            expectSecurityHeaders(response)
        }
    }

    @Test func gzipIsSentWhenAcceptedAndDecodesToTheFile() throws {
        let response = get("/js/app.js", [("Accept-Encoding", "deflate, gzip, br")])
        #expect(response.headers["Content-Encoding"] == "gzip")
        #expect(response.headers["Vary"] == "Accept-Encoding")
        #expect(response.body.count < Self.script.count)
        #expect(try gunzip(response.body) == Self.script)
        #expect(response.headers["ETag"] != get("/js/app.js").headers["ETag"])
    }

    @Test func gzipFollowsTheWeights() {
        let cases: [(String, Bool)] = [("gzip", true), ("GZIP", true), ("x-gzip", true), ("*", true),
                                       ("br, *;q=0.5", true), ("gzip;q=0", false), ("gzip; q=0.0", false),
                                       ("*;q=0", false), ("gzip;q=0, *", false), ("identity", false), ("", false),
                                       ("gzip;q=0.001", true)]
        for (field, expectsGzip) in cases {
            let response = get("/js/app.js", [("Accept-Encoding", field)])
            #expect((response.headers["Content-Encoding"] == "gzip") == expectsGzip, "\(field)")
        }
        #expect(get("/js/app.js").headers["Content-Encoding"] == nil)
        #expect(get("/img/logo.png", [("Accept-Encoding", "gzip")]).headers["Content-Encoding"] == nil)
    }

    @Test func aMatchingValidatorIs304WithoutABody() throws {
        let tag = try #require(get("/").headers["ETag"])
        for field in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
            let response = get("/", [("If-None-Match", field)])
            #expect(response.status == 304, "\(field)")
            #expect(response.headers["ETag"] == tag)
            #expect(response.body.isEmpty)
            expectSecurityHeaders(response)
        }
        #expect(get("/", [("If-None-Match", "\"other\"")]).status == 200)
        let gzipTag = try #require(get("/js/app.js", [("Accept-Encoding", "gzip")]).headers["ETag"])
        #expect(get("/js/app.js", [("If-None-Match", gzipTag)]).status == 200)
        #expect(get("/js/app.js", [("If-None-Match", gzipTag), ("Accept-Encoding", "gzip")]).status == 304)
    }

    @Test func aFolderWithoutItsSlashRedirects() {
        let response = get("/admin")
        #expect(response.status == 301)
        #expect(response.headers["Location"] == "/admin/")
        #expect(get("/admin/").body == Array("<!doctype html>console".utf8))
    }

    @Test func missingAndHiddenFilesAre404AndKeepTheConnection() {
        for target in ["/nope.js", "/js/", "/.git/config", "/admin/missing.html"] {
            let response = get(target)
            #expect(response.status == 404, "\(target)")
            #expect(response.headers["Cache-Control"] == "no-store")
            #expect(response.headers["Connection"] == nil)
            expectSecurityHeaders(response)
        }
    }

    @Test func badTargetsAre400Or414AndCloseTheConnection() {
        for target in ["/../etc/passwd", "/%2e%2e/etc/passwd", "/a%2fb", "/a%00", "//etc/passwd", "/a\\b"] {
            let response = get(target)
            #expect(response.status == 400, "\(target)")
            #expect(response.headers["Connection"] == "close")
            expectSecurityHeaders(response)
        }
        #expect(get("/" + String(repeating: "x", count: 2000)).status == 414)
    }

    private func gunzip(_ bytes: [UInt8]) throws -> [UInt8] {
        var stream = z_stream()
        try #require(bangbang_inflateInit2(&stream, 15 + 16) == Z_OK)
        defer { inflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: 1 << 16)
        var input = bytes
        let result = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                return inflate(&stream, Z_FINISH)
            }
        }
        try #require(result == Z_STREAM_END)
        return Array(output.prefix(Int(stream.total_out)))
    }
}
