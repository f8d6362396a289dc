import Foundation
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct StaticSiteLoaderTests {
    /// A fresh folder under the temporary directory, removed by the caller.
    private func makeFolder() throws -> String {
        let path = NSTemporaryDirectory() + "bangbang-web-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent,
                                                withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    @Test func loadsKnownTypesAndLeavesOutHiddenUnknownAndOutsideFiles() throws {
        let root = try makeFolder()
        let outside = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: root); try? FileManager.default.removeItem(atPath: outside) }
        try write("<!doctype html>", to: root + "/index.html")
        try write("console", to: root + "/admin/index.html")
        try write("export {}", to: root + "/js/app.js")
        try write("[core]", to: root + "/.git/config")
        try write("SECRET=1", to: root + "/.env")
        try write("MZ", to: root + "/tool.exe")
        try write("root:x:0:0", to: outside + "/passwd.txt")
        try write("body{}", to: outside + "/theme/site.css")
        try FileManager.default.createSymbolicLink(atPath: root + "/passwd.txt", withDestinationPath: outside + "/passwd.txt")
        try FileManager.default.createSymbolicLink(atPath: root + "/theme", withDestinationPath: outside + "/theme")
        try FileManager.default.createSymbolicLink(atPath: root + "/app.js", withDestinationPath: root + "/js/app.js")

        var skipped: [String: String] = [:]
        let site = try StaticSiteLoader.load(from: root) { name, reason in skipped[name] = reason }
        #expect(Set(site.files.keys) == ["index.html", "admin/index.html", "js/app.js", "app.js"])
        #expect(site.files["js/app.js"]?.contentType == "text/javascript; charset=utf-8")
        #expect(skipped["tool.exe"] != nil)
        #expect(skipped["passwd.txt"]?.contains("outside") == true)
        #expect(skipped.keys.allSatisfy { !$0.contains(".git") && !$0.contains(".env") })
    }

    @Test func aFolderWithoutIndexOrThatIsMissingIsRefused() throws {
        let root = try makeFolder()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try write("export {}", to: root + "/app.js")
        #expect(throws: StaticSiteError.self) { try StaticSiteLoader.load(from: root) }
        #expect(throws: StaticSiteError.self) { try StaticSiteLoader.load(from: root + "/missing") }
        #expect(throws: StaticSiteError.self) { try StaticSiteLoader.load(from: root + "/app.js") }
    }

    @Test func filesOfTheSameContentShareATagAndDifferentOnesDoNot() {
        let a = StaticSiteLoader.makeFile(Array("one".utf8), contentType: "text/plain; charset=utf-8", compresses: true)
        let b = StaticSiteLoader.makeFile(Array("one".utf8), contentType: "text/plain; charset=utf-8", compresses: true)
        let c = StaticSiteLoader.makeFile(Array("two".utf8), contentType: "text/plain; charset=utf-8", compresses: true)
        #expect(a.entityTag == b.entityTag)
        #expect(a.entityTag != c.entityTag)
        #expect(a.gzippedBody == nil)   // three bytes do not shrink
    }
}

@Suite struct WebFolderTests {
    @Test func anInstalledBinaryLooksInShareThenBesideItself() {
        let candidates = WebFolder.candidates(besideExecutable: "/opt/bangbang/bin/bangbang")
        #expect(candidates.prefix(2) == ["/opt/bangbang/share/bangbang/web", "/opt/bangbang/bin/web"])
    }

    @Test func aBinaryInACheckoutFindsTheCheckoutsWebFolder() throws {
        let root = NSTemporaryDirectory() + "bangbang-checkout-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/.build/x86_64-unknown-linux-gnu/debug",
                                                withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/web", withIntermediateDirectories: true)
        try Data("// swift-tools-version:6.0".utf8).write(to: URL(fileURLWithPath: root + "/Package.swift"))
        let binary = root + "/.build/x86_64-unknown-linux-gnu/debug/bangbang"
        #expect(WebFolder.candidates(besideExecutable: binary).last == root + "/web")
        #expect(WebFolder.locate(besideExecutable: binary) == nil)
        try Data("<!doctype html>".utf8).write(to: URL(fileURLWithPath: root + "/web/index.html"))
        #expect(WebFolder.locate(besideExecutable: binary) == root + "/web")
    }
}
