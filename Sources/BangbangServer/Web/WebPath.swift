// Turns a request-target into the name of a file of the web app, or a refusal. Pure: no file
// system, so every way out of the folder is refused here, byte by byte in tests, before a name
// is ever looked up (and the lookup itself is into the in-memory table of `StaticSite`).
//
// Accepted: origin-form targets ("/", "/js/app.js", "/admin/") of at most `maximumLength`
// bytes, percent-encoded UTF-8 allowed. Refused with 400: dot segments ("." and ".."), raw or
// encoded; encoded "/" or "\" (which would smuggle a separator past this check); NUL and other
// control bytes; a backslash; empty segments ("//"); malformed escapes or invalid UTF-8.
// Refused with 414: overlong targets. Names of hidden files (a segment starting with ".") are
// simply not found.
import BangbangApplication

package struct WebPath: Hashable, Sendable {
    /// The file's path relative to the web folder, segments joined by "/" ("admin/index.html").
    let relativePath: String

    package enum Refusal: Error, Equatable {
        case malformed(String)
        case tooLong
    }

    /// Longest target accepted: the app's own paths are short, so 1 KiB leaves room without
    /// letting a client make us decode kilobytes per request.
    static let maximumLength = 1024

    /// Resolves the path part of a target (the query is ignored). A path ending in "/" names
    /// that folder's `index.html`.
    static func resolve(_ path: Substring) throws(Refusal) -> WebPath {
        guard path.utf8.count <= maximumLength else { throw .tooLong }
        guard path.utf8.first == UInt8(ascii: "/") else { throw .malformed("the path must start with /") }
        var segments: [String] = []
        var rawSegments = path.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        let namesFolder = rawSegments.last?.isEmpty ?? true
        if namesFolder { rawSegments.removeLast() }
        for raw in rawSegments {
            guard !raw.isEmpty else { throw .malformed("empty path segment") }
            let segment = try decodeSegment(raw)
            guard segment != ".", segment != ".." else { throw .malformed("dot segments are not allowed") }
            segments.append(segment)
        }
        if namesFolder { segments.append("index.html") }
        return WebPath(relativePath: segments.joined(separator: "/"))
    }

    /// Whether the name is of a hidden file or inside a hidden folder, which are never served.
    var isHidden: Bool {
        relativePath.split(separator: "/").contains { $0.hasPrefix(".") }
    }

    private static func decodeSegment(_ raw: Substring.UTF8View.SubSequence) throws(Refusal) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            var byte = raw[index]
            if byte == UInt8(ascii: "%") {
                let high = raw.index(after: index)
                guard high < raw.endIndex, raw.index(after: high) < raw.endIndex,
                      let h = hexValue(raw[high]), let l = hexValue(raw[raw.index(after: high)]) else {
                    throw .malformed("malformed percent-escape")
                }
                byte = h << 4 | l
                guard byte != UInt8(ascii: "/") else { throw .malformed("encoded / is not allowed") }
                index = raw.index(high, offsetBy: 2)
            } else {
                index = raw.index(after: index)
            }
            guard byte >= 0x20, byte != 0x7F else { throw .malformed("control characters are not allowed") }
            guard byte != UInt8(ascii: "\\") else { throw .malformed("backslashes are not allowed") }
            bytes.append(byte)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformed("the path is not UTF-8") }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
