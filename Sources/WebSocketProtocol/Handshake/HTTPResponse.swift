/// A complete HTTP/1.1 response as a value: the 101 that upgrades, the rejections that refuse,
/// and the small plain answers the server gives on non-WebSocket paths.
///
/// `serialized()` writes `Content-Length` itself (from `body`) for every status that may carry
/// a body, so callers cannot get it wrong. Every response except 101 is built with
/// `Connection: close`: we do not keep plain HTTP connections alive, and saying so lets the
/// client stop waiting for more.
public struct HTTPResponse: Sendable, Hashable {
    public var status: Int
    public var reasonPhrase: String
    /// Fields to send; `Content-Length` is managed by `serialized()` and must not be set here.
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, reasonPhrase: String? = nil, headers: HTTPHeaders = [:], body: [UInt8] = []) {
        precondition((100...999).contains(status), "HTTP status must have three digits")
        precondition(!headers.contains(name: "Content-Length"), "Content-Length is written by serialized()")
        self.status = status
        self.reasonPhrase = reasonPhrase ?? Self.standardReasonPhrase(for: status)
        self.headers = headers
        self.body = body
        precondition(!self.reasonPhrase.utf8.contains { $0 == ASCII.carriageReturn || $0 == ASCII.lineFeed },
                     "reason phrase must not contain CR or LF")
    }

    /// A refusal with a plain-text body stating `reason`, closing the connection.
    /// 426 carries `Sec-WebSocket-Version: 13` (RFC 6455 §4.2.2) and 405 `Allow: GET, HEAD`
    /// (RFC 9110 §15.5.6), which those statuses require.
    public static func rejection(status: Int, reason: String) -> HTTPResponse {
        var headers: HTTPHeaders = ["Content-Type": "text/plain; charset=utf-8", "Connection": "close"]
        if status == 426 { headers.append(name: "Sec-WebSocket-Version", value: WebSocketHandshake.version) }
        if status == 405 { headers.append(name: "Allow", value: "GET, HEAD") }
        return HTTPResponse(status: status, headers: headers, body: Array((reason + "\n").utf8))
    }

    /// A plain answer for a non-WebSocket request (`/healthz` and the like), closing the connection.
    public static func plain(status: Int = 200, contentType: String = "text/plain; charset=utf-8",
                             body: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": contentType, "Connection": "close"], body: body)
    }

    /// Whether this status may carry a body and so gets a `Content-Length` (RFC 9110 §8.6).
    public var allowsBody: Bool {
        !(100...199).contains(status) && status != 204 && status != 304
    }

    /// The bytes to write. For a response to HEAD pass `includingBody: false`: the
    /// `Content-Length` still describes the body a GET would have had (RFC 9110 §9.3.2).
    public func serialized(includingBody: Bool = true) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128 + headers.count * 32 + body.count)
        output.append(contentsOf: "HTTP/1.1 \(status) \(reasonPhrase)\r\n".utf8)
        for field in headers {
            output.append(contentsOf: field.name.utf8)
            output.append(contentsOf: ": ".utf8)
            output.append(contentsOf: field.value.utf8)
            output.append(contentsOf: "\r\n".utf8)
        }
        if allowsBody {
            output.append(contentsOf: "Content-Length: \(body.count)\r\n".utf8)
        }
        output.append(contentsOf: "\r\n".utf8)
        if includingBody && allowsBody {
            output.append(contentsOf: body)
        }
        return output
    }

    static func standardReasonPhrase(for status: Int) -> String {
        switch status {
        case 101: "Switching Protocols"
        case 200: "OK"
        case 204: "No Content"
        case 301: "Moved Permanently"
        case 304: "Not Modified"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 426: "Upgrade Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }
}
