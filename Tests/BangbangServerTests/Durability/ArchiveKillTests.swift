// kill -9 at random moments while errands close, get archived and move out of memory: after
// every restart, each order id a shard ever allocated is in memory or in the archive, and an
// order in both is never newer in the archive than in memory. Runs the built `bangbang` and
// `loadtest` binaries (`swift build` first).
import BangbangCore
import Foundation
import Glibc
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized) struct ArchiveKillTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
    static let adminPhone = "+8613000000000"

    /// Starts the server on `data` and returns it with its port once it listens.
    func startServer(data: String, log: String) throws -> (ChildProcess, Int) {
        let process = try ChildProcess(
            executable: Self.root + "/.build/debug/bangbang",
            arguments: ["--dev", "--host", "127.0.0.1", "--port", "0", "--data-dir", data, "--no-web",
                        "--fsync", "always", "--rating-window-days", "0", "--snapshot-interval", "1",
                        "--admin-phone", Self.adminPhone, "--sms-per-ip-hourly", "0", "--requests-per-second", "0",
                        "--user-requests-per-second", "0", "--handshakes-per-second-per-address", "0"],
            logPath: log)
        let port = process.waitForOutput(within: 30) { text -> Int? in
            guard let range = text.range(of: "event=listening "),
                  let field = text[range.upperBound...].split(separator: "\n")[0].split(separator: " ").first(where: { $0.hasPrefix("port=") })
            else { return nil }
            return Int(field.dropFirst(5))
        }
        if let port { return (process, port) }
        guard process.isRunning else { throw ConfigurationError("the server exited:\n\(process.output())") }
        process.signal(SIGKILL)
        process.waitUntilExit()
        throw ConfigurationError("the server did not start")
    }

    func errands(port: Int, seconds: Int) throws -> ChildProcess {
        try ChildProcess(executable: Self.root + "/.build/debug/loadtest",
                         arguments: ["errand", "--url", "ws://127.0.0.1:\(port)/ws", "--duration", String(seconds), "--rate", "40",
                                     "--runners", "10", "--publishers", "4", "--admin-phone", Self.adminPhone, "--quiet"],
                         logPath: "/dev/null")
    }

    @Test func killedAtRandomWhileArchivingLosesNoOrder() async throws {
        for binary in ["bangbang", "loadtest"] {
            try #require(FileManager.default.isExecutableFile(atPath: Self.root + "/.build/debug/" + binary), "run `swift build` first")
        }
        let directory = try makeTemporaryDirectory("bangbang-archive-kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let data = directory + "/data"
        var generator = SystemRandomNumberGenerator()
        for round in 0..<3 {
            let (server, port) = try startServer(data: data, log: directory + "/server-\(round).log")
            let driver = try errands(port: port, seconds: 12)
            // Past the first archive sweeps (every 2 s), at a random moment.
            usleep(UInt32.random(in: 2_500_000...7_000_000, using: &generator))
            server.signal(SIGKILL)
            server.waitUntilExit()
            driver.signal(SIGKILL)
            driver.waitUntilExit()
        }
        let log = (try? String(contentsOfFile: directory + "/server-2.log", encoding: .utf8)) ?? ""
        #expect(log.contains("event=recovered"))

        // The directory as the next start sees it, with its archive caught up.
        var configuration = ServerConfiguration()
        configuration.dataDirectory = data
        configuration.fsyncPolicy = .never
        let logger = Logger(level: .error, sink: { _ in })
        let app = try Application(configuration: configuration, logger: logger, metrics: ServerMetrics(),
                                  clock: WallClock.now, sms: DevelopmentSMSProvider(logger: logger, revealsCodes: true))
        defer { try? app.journal.close() }
        for _ in 0..<2_000 where app.archiver.backlog.pending > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(app.archiver.backlog.pending == 0)
        var inMemory = 0
        var archived = 0
        for owner in app.shards {
            let shard = owner.queue.sync { owner.shard }
            for serial in 1..<shard.nextSerial {
                let id = OrderID(shard: shard.index, serial: serial)
                let stored = try app.archive.order(id: String(id.rawValue))
                if let order = shard.order(id) {
                    inMemory += 1
                    if let stored { #expect(stored.revision <= Int64(order.revision), "order \(id)") }
                } else {
                    archived += 1
                    #expect(stored != nil, "order \(id) is neither in memory nor in the archive")
                }
            }
        }
        #expect(archived > 0, "no order moved to the archive (\(inMemory) in memory)")
    }
}
