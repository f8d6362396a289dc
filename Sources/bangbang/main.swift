// The bangbang executable: reads the configuration, recovers the data directory, serves until
// SIGTERM or SIGINT, then shuts down gracefully (clients are told 1001, the journal is flushed).
import BangbangApplication
import BangbangServer
import Dispatch
import Foundation
import ScaleOut

let version = "0.1.0"

// `bangbang admin …` is its own tool (Admin/): it never serves.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "admin" {
    exit(AdminCLI.run(arguments: Array(CommandLine.arguments.dropFirst(2)), environment: ProcessInfo.processInfo.environment))
}

let loaded: LoadedConfiguration
do {
    loaded = try ConfigurationLoader.load(arguments: Array(CommandLine.arguments.dropFirst()),
                                          environment: ProcessInfo.processInfo.environment)
} catch {
    FileHandle.standardError.write(Data("bangbang: \(error.message)\n".utf8))
    exit(64)
}

switch loaded.command {
case .help:
    print(ConfigurationLoader.helpText())
    exit(0)
case .version:
    print("bangbang \(version)")
    exit(0)
case .checkConfig:
    do {
        try Server.check(loaded.configuration)
    } catch {
        FileHandle.standardError.write(Data("bangbang: \(error)\n".utf8))
        exit(64)
    }
    print("configuration ok")
    exit(0)
case .serve:
    break
}

let configuration = loaded.configuration
let logger = Logger(level: LogLevel(name: configuration.logLevel) ?? .info)
if configuration.smsCommand != nil {
    if configuration.isDevelopment { logger.warning("development_mode", ["detail": "--dev has no effect on codes sent by --sms-command"]) }
} else if configuration.isDevelopment {
    logger.warning("development_mode", ["detail": "SMS codes are logged and returned in replies (dev_code); never use --dev in production"])
} else {
    logger.warning("development_sms_provider", ["detail": "no SMS provider configured: codes are written to this log only"])
}

/// What serves: one node on its own (`Server`), or, with `--nats`, a node of a cluster that is
/// a standby until it owns the partition (`ClusterRunner`).
let shutdown: @Sendable () -> Void
let reload: @Sendable (ServerConfiguration) throws -> [String]
do {
    let exits: ExitRequests
    if configuration.isClustered {
        let runner = ClusterRunner(configuration: configuration, logger: logger)
        exits = runner.exitRequests
        try runner.start()
        (shutdown, reload) = ({ runner.shutdown() }, { try runner.reload($0) })
    } else {
        let server = try Server(configuration: configuration, logger: logger)
        exits = server.exitRequests
        // Written once the data directory is ours (locked), before anyone can connect.
        try AdminSecret.create(in: configuration.dataDirectory)
        _ = try server.start()
        (shutdown, reload) = ({ server.shutdown() }, { try server.reload($0) })
    }
    // The server and the cluster node decide when serving on would do harm; ending the process
    // is this executable's part (status 75: a supervisor starts it again).
    exits.handle { request in
        FileHandle.standardError.write(Data("bangbang: \(request.reason)\n".utf8))
        exit(request.status)
    }
} catch {
    let words = StartupFailure.describe(error, host: configuration.host, port: configuration.port,
                                        dataDirectory: configuration.dataDirectory,
                                        certificatePath: configuration.tlsCertificatePath, keyPath: configuration.tlsKeyPath)
    logger.error("startup_failed", ["error": words])
    FileHandle.standardError.write(Data("bangbang: cannot start: \(words)\n".utf8))
    exit(70)
}

signal(SIGPIPE, SIG_IGN)
var signalSources: [DispatchSourceSignal] = []
for signalNumber in [SIGTERM, SIGINT] {
    signal(signalNumber, SIG_IGN)
    // On the main queue: closures written at top level belong to the main actor, and the
    // runtime checks that they run there.
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        logger.info("shutting_down", ["signal": signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"])
        shutdown()
        exit(0)
    }
    source.resume()
    signalSources.append(source)
}
// SIGHUP reloads what can change without a restart: the log level, the request, handshake and
// per-address limits, and the TLS certificate (for new connections).
signal(SIGHUP, SIG_IGN)
let reloadSource = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .main)
reloadSource.setEventHandler {
    do {
        let reloaded = try ConfigurationLoader.load(arguments: Array(CommandLine.arguments.dropFirst()),
                                                    environment: ProcessInfo.processInfo.environment)
        let applied = try reload(reloaded.configuration)
        logger.level = LogLevel(name: reloaded.configuration.logLevel) ?? logger.level
        logger.info("reloaded", ["log_level": reloaded.configuration.logLevel,
                                 "applied": applied.joined(separator: ","),
                                 "detail": "other settings take effect at the next restart"])
    } catch {
        logger.error("reload_failed", ["error": "\(error)"])
    }
}
reloadSource.resume()
dispatchMain()
