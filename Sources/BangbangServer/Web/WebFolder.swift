// Where the web app's files are found. The binary does not embed them; it looks beside itself,
// so a customised copy is an edit of plain files, and one rule serves both ways of running it:
//
//   1. `--web-dir DIR`, when given (and then it must load, or the server does not start);
//   2. `PREFIX/share/bangbang/web` for a binary installed as `PREFIX/bin/bangbang`;
//   3. `web/` in the binary's own folder (a binary copied together with its files);
//   4. the checkout the binary was built in: the nearest folder above it holding both
//      `Package.swift` and `web/index.html` (`swift run` runs `.build/<triple>/debug/bangbang`).
import BangbangApplication
import Foundation

package enum WebFolder {
    /// The candidates of rules 2–4 for a binary at `executable`, in order.
    static func candidates(besideExecutable executable: String) -> [String] {
        let folder = (executable as NSString).deletingLastPathComponent
        var result = [((folder as NSString).appendingPathComponent("../share/bangbang/web") as NSString).standardizingPath,
                      (folder as NSString).appendingPathComponent("web")]
        var ancestor = folder
        for _ in 0..<5 {
            ancestor = (ancestor as NSString).deletingLastPathComponent
            guard !ancestor.isEmpty, ancestor != "/" else { break }
            if FileManager.default.fileExists(atPath: ancestor + "/Package.swift") {
                result.append(ancestor + "/web")
                break
            }
        }
        return result
    }

    /// The first candidate that holds an `index.html`, or nil.
    static func locate(besideExecutable executable: String) -> String? {
        candidates(besideExecutable: executable).first {
            FileManager.default.fileExists(atPath: $0 + "/index.html")
        }
    }

    /// This process's binary, symlinks resolved.
    static var currentExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
