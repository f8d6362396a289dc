// Reading and writing `--json` result files.
import BangbangProtocol
import Foundation

enum ResultFile {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func save(_ result: RunResult, to path: String) throws {
        var bytes = JSONWriter.encode(result.json)
        bytes.append(UInt8(ascii: "\n"))
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func load(_ path: String) throws(Failure) -> JSONValue {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "cannot read \(path)") }
        do { return try JSONParser.parse(Array(data)) } catch {
            throw Failure(description: "\(path) is not JSON: \(error)")
        }
    }

    static func loadMetrics(_ path: String) throws(Failure) -> [String: Double] {
        let json = try load(path)
        do { return try RunResult.metrics(inJSON: json) } catch {
            throw Failure(description: "\(path): \(error)")
        }
    }
}

/// The protocol module's parser under the name the splitter uses.
enum JSONParserFacade {
    static func parse(_ bytes: [UInt8]) throws -> JSONValue { try JSONParser.parse(bytes) }
}
