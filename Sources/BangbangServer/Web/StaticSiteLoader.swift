// Reads the web folder into a `StaticSite`: every regular file of a known type, with its
// gzip encoding and entity tag computed once here instead of per request. This is the only
// code of the web app that touches the file system, and it runs at start and on SIGHUP.
//
// What is left out, and why: hidden files (".git", editor droppings); files of a type we
// have no Content-Type for (served as guesses they would invite sniffing); and any file whose
// real path, symlinks resolved, lies outside the folder, so a link cannot publish /etc. The
// folder is bounded in files and bytes because all of it stays in memory.
import BangbangApplication
import CZlib
import Crypto
import Foundation

package struct StaticSiteError: Error, CustomStringConvertible {
    package let description: String
}

package enum StaticSiteLoader {
    /// The web app is a few dozen files; these bounds only stop a wrong `--web-dir` (a home
    /// directory, say) from filling memory.
    static let maximumFileCount = 2_000
    static let maximumFileBytes = 8 << 20
    static let maximumTotalBytes = 64 << 20

    static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "json": "application/json; charset=utf-8",
        "webmanifest": "application/manifest+json; charset=utf-8",
        "svg": "image/svg+xml; charset=utf-8",
        "txt": "text/plain; charset=utf-8",
        "png": "image/png",
        "jpg": "image/jpeg",
        "jpeg": "image/jpeg",
        "webp": "image/webp",
        "ico": "image/x-icon",
        "woff2": "font/woff2",
    ]

    /// Types worth compressing; images and fonts are compressed already.
    private static let compressible: Set<String> = ["html", "js", "mjs", "css", "json", "webmanifest", "svg", "txt"]

    /// Loads `directory`; `skipped` receives each file left out with the reason.
    package static func load(from directory: String, skipped: (String, String) -> Void = { _, _ in }) throws -> StaticSite {
        guard let root = realPath(directory) else { throw StaticSiteError(description: "web folder \(directory) does not exist") }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isFolder), isFolder.boolValue else {
            throw StaticSiteError(description: "web folder \(directory) is not a directory")
        }
        guard let names = FileManager.default.enumerator(atPath: root) else {
            throw StaticSiteError(description: "web folder \(directory) cannot be read")
        }
        var files: [String: StaticFile] = [:]
        var totalBytes = 0
        while let name = names.nextObject() as? String {
            if name.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
            let path = root + "/" + name
            guard let real = realPath(path), real.hasPrefix(root + "/") else {
                skipped(name, "its real path is outside the web folder")
                continue
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            let type = (name as NSString).pathExtension.lowercased()
            guard let contentType = contentTypes[type] else {
                skipped(name, "no known content type for .\(type)")
                continue
            }
            guard let data = FileManager.default.contents(atPath: real) else {
                skipped(name, "unreadable")
                continue
            }
            guard data.count <= maximumFileBytes else {
                skipped(name, "larger than \(maximumFileBytes) bytes")
                continue
            }
            totalBytes += data.count
            guard files.count < maximumFileCount, totalBytes <= maximumTotalBytes else {
                throw StaticSiteError(description: "web folder \(directory) holds more than \(maximumFileCount) files or \(maximumTotalBytes) bytes")
            }
            files[name] = makeFile(Array(data), contentType: contentType, compresses: compressible.contains(type))
        }
        guard files["index.html"] != nil else {
            throw StaticSiteError(description: "web folder \(directory) has no index.html")
        }
        return StaticSite(files: files)
    }

    static func makeFile(_ body: [UInt8], contentType: String, compresses: Bool) -> StaticFile {
        let digest = Digest.sha256(body).prefix(12).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        var gzipped: [UInt8]?
        if compresses, let encoded = gzip(body), encoded.count < body.count { gzipped = encoded }
        return StaticFile(contentType: contentType, body: body, gzippedBody: gzipped, entityTag: "\"\(digest)\"")
    }

    /// The gzip encoding (RFC 1952) of `bytes` at the best compression: done once per file.
    static func gzip(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        // windowBits 15 + 16 asks zlib for a gzip header and trailer instead of a zlib one.
        guard bangbang_deflateInit2(&stream, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(bytes.count))) + 32)
        var input = bytes
        let result = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = uInt(outputBuffer.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END else { return nil }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
