// loadtest: the Bangbang load-test driver.
//
// Theory of operation
//
// Speaks the real protocol over real WebSocket connections to any `ws://` or `wss://` server,
// with the project's own modules: SocketServer's event loops and `SocketClient` for the sockets,
// WebSocketProtocol's client handshake, frame decoder/encoder and (for compression) its
// client-role `WebSocketConnection`, BangbangProtocol's JSON codec for requests and replies.
//
// ```
// swift run -c release loadtest <scenario> --url ws://127.0.0.1:8080/ws [options] [--json FILE]
// swift run -c release loadtest compare A.json B.json
// swift run -c release loadtest --help          # every flag; `loadtest <scenario> --help` for one
// ```
//
// | scenario | what it measures | must be zero |
// |---|---|---|
// | `echo` | N connections to `/echo` (server `--echo`), W messages of S bytes in flight each; messages/s, round trip | closes, stray echoes |
// | `connections` | open N sessions (`--login`, `--compress`), hold T s; connect rate, server RSS per connection (`--server-pid`) | connect failures, drops |
// | `feed` | runners subscribed to `--types`, publishers at `--rate`; publish→runner latency, deliveries/s | missing, duplicated, `seq` gaps/repeats |
// | `race` | K runners accept each of M orders at once; accept latency | orders without exactly one winner, wrong winner, errors other than `order_taken` |
// | `errand` | whole errands of the four types with cancellations (1 in 10) and reconnects with `auth.resume` (1 in 5); per-operation latency | failed or unfinished errands |
// | `durable` | C publishers (default 100), one `order.publish` in flight each; acks/s, ack latency | refused publishes |
//
// Protocol scenarios need a server started with `--dev` (codes come back as `dev_code`),
// `--admin-phone P` (the driver logs in as `--admin-phone P` and approves every runner) and,
// because all clients share a few loopback addresses, `--sms-per-ip-hourly 0`. The
// administrator's token is kept in `$TMPDIR/loadtest-admin-*.token` and reused with
// `auth.resume`, since that phone may ask for a code only once a minute.
//
// Every run prints a progress line a second (stderr), a summary table, and with `--json` a file
// holding raw counters and histograms (so runs merge exactly) plus the derived `metrics`, which
// `compare` lines up with the ratio B/A. Exit status: 0 pass, 1 violations or failure, 2 usage.
//
// How it stays out of the way
// ----------------------------
//
// - One event loop per core (`--threads`), non-blocking sockets; each loop owns its clients and
//   statistics, so nothing is locked or shared on the hot path; results merge at the end.
// - Receive path without per-message allocation: frames are decoded in place from the loop's
//   read buffer; echo only counts message boundaries; feed events are read by `FeedEventScanner`
//   without a JSON tree. Echo sends one pre-masked frame per connection (the same array each
//   time) and batches the replies owed after one read into one write.
// - Latencies go into log-linear histograms (≤ 1.6 % bucket error, exact min/max), merged across
//   loops and processes before percentiles are taken.
// - It reports its own CPU (`driver_cpu_percent_of_one_core`, getrusage) and, with `--server-pid`,
//   the server's CPU, RSS and both processes' run-queue wait (`*_cpu_wait_seconds`, from
//   `/proc/*/task/*/schedstat`): a large wait means the machine, not the code, was the limit.
// - Connections spread over source addresses 127.0.0.2… (`--sources`, default one per 1,000
//   connections, the server's per-address cap). `--processes N` re-executes the driver N times
//   with a share of the work each (one process may hold 20,000 descriptors here); children report
//   "ready" after connecting, start measuring together on "go", and their JSON results merge.
import BangbangProtocol
import Foundation
import Glibc
import SocketServer
import WebSocketProtocol

signal(SIGPIPE, SIG_IGN)
let descriptorLimit = ProcessResources.raiseDescriptorLimit()
let arguments = Array(CommandLine.arguments.dropFirst())

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("loadtest: \(message)\n".utf8))
    exit(status)
}

let command: Command
do {
    command = try ArgumentParser.parse(arguments, cores: ProcessInfo.processInfo.activeProcessorCount)
} catch {
    fail("\(error)", status: 2)
}

switch command {
case .help(let scenario):
    print(ArgumentParser.usage(for: scenario))

case .compare(let first, let second):
    do {
        let a = try ResultFile.loadMetrics(first)
        let b = try ResultFile.loadMetrics(second)
        print(Report.comparison(a, b, firstName: first, secondName: second))
    } catch {
        fail("\(error)", status: 2)
    }

case .run(let options):
    let result: RunResult
    if options.processes > 1, options.processCount == 1 {
        do { result = try ProcessSplitter.run(options, arguments: arguments) } catch { fail("\(error)", status: 1) }
    } else {
        let needed = options.share(of: max(options.connections, options.runners + options.effectivePublishers)) + 64
        if needed > descriptorLimit {
            fail("this process may open \(descriptorLimit) files but the run needs about \(needed); "
                 + "split it with --processes \((needed * options.processCount + descriptorLimit - 1) / descriptorLimit + 1)",
                 status: 2)
        }
        do { result = try ScenarioRunner.run(options) } catch { fail("\(error)", status: 1) }
    }
    if let path = options.jsonPath {
        do { try ResultFile.save(result, to: path) } catch { fail("cannot write \(path): \(error)", status: 1) }
    }
    if let path = options.plotPath, options.processCount == 1 {
        do { try Data(RunPlot.svg(for: result).utf8).write(to: URL(fileURLWithPath: path)) } catch {
            fail("cannot write \(path): \(error)", status: 1)
        }
    }
    if options.processCount == 1 { print(Report.summary(of: result)) }
    exit(result.violations.isEmpty ? 0 : 1)
}
