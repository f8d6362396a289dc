import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct WebPathTests {
    private func resolved(_ path: String) throws -> String {
        try WebPath.resolve(path[...]).relativePath
    }

    private func expectMalformed(_ path: String, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let accepted = try WebPath.resolve(path[...])
            Issue.record("\(path) was accepted as \(accepted.relativePath)", sourceLocation: sourceLocation)
        } catch {
            guard case .malformed = error else {
                Issue.record("\(path): expected malformed, got \(error)", sourceLocation: sourceLocation)
                return
            }
        }
    }

    @Test func foldersNameTheirIndexAndFilesThemselves() throws {
        #expect(try resolved("/") == "index.html")
        #expect(try resolved("/admin/") == "admin/index.html")
        #expect(try resolved("/js/app.js") == "js/app.js")
        #expect(try resolved("/admin") == "admin")
    }

    @Test func percentEscapesDecodeToUTF8Names() throws {
        #expect(try resolved("/%E5%B8%AE%E5%B8%AE.png") == "帮帮.png")
        #expect(try resolved("/a%20b.txt") == "a b.txt")
        #expect(try resolved("/%61pp.js") == "app.js")
    }

    @Test func dotSegmentsAreRefusedRawOrEncoded() {
        for path in ["/..", "/../etc/passwd", "/a/../../b", "/.", "/a/./b", "/%2e%2e/x", "/%2E%2E/x",
                     "/.%2e/x", "/%2e./x", "/%2e", "/js/%2e%2e/%2e%2e/etc/passwd"] {
            expectMalformed(path)
        }
    }

    @Test func encodedSeparatorsBackslashesAndControlBytesAreRefused() {
        for path in ["/a%2fb", "/a%2Fb", "/..%2f..%2fetc%2fpasswd", "/a%5cb", "/a%5Cb", "/a\\b", "/..\\x",
                     "/a%00b", "/a%00", "/a\u{0}b", "/a%0d%0aSet-Cookie:x", "/a%1fb", "/a%7f"] {
            expectMalformed(path)
        }
    }

    @Test func emptySegmentsAndNonOriginFormsAreRefused() {
        for path in ["//x", "/a//b", "//", "", "x", "*", "http://host/x", "js/app.js"] {
            expectMalformed(path)
        }
    }

    @Test func malformedEscapesAndInvalidUTF8AreRefused() {
        for path in ["/%", "/%4", "/%zz", "/%g0", "/%C3%28", "/%FF", "/%E5%B8"] {
            expectMalformed(path)
        }
    }

    @Test func overlongPathsAreRefusedAtTheLimit() throws {
        let longest = "/" + String(repeating: "a", count: WebPath.maximumLength - 1)
        #expect(try resolved(longest).count == WebPath.maximumLength - 1)
        #expect(throws: WebPath.Refusal.tooLong) { try WebPath.resolve((longest + "a")[...]) }
    }

    @Test func hiddenNamesAreMarkedAnywhereInThePath() throws {
        #expect(try WebPath.resolve("/.git/config").isHidden)
        #expect(try WebPath.resolve("/js/.env").isHidden)
        #expect(try WebPath.resolve("/%2egit/HEAD").isHidden)
        #expect(try !WebPath.resolve("/js/app.js").isHidden)
    }
}
