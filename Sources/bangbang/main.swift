// The bangbang executable: reads the configuration, recovers the data directory, serves until
// SIGTERM or SIGINT, then shuts down gracefully (clients are told 1001, the journal is flushed).
import BangbangServer
import Dispatch
import Foundation

let version = "0.1.0"

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
    print("configuration ok")
    exit(0)
case .serve:
    break
}

let configuration = loaded.configuration
let logger = Logger(level: LogLevel(name: configuration.logLevel) ?? .info)
if configuration.isDevelopment {
    logger.warning("development_mode", ["detail": "SMS codes are logged and returned in replies (dev_code); never use --dev in production"])
} else {
    logger.warning("development_sms_provider", ["detail": "no SMS provider configured: codes are written to this log only"])
}

let server: BangbangServer
do {
    server = try BangbangServer(configuration: configuration, logger: logger)
    _ = try server.start()
} catch {
    logger.error("startup_failed", ["error": "\(error)"])
    FileHandle.standardError.write(Data("bangbang: cannot start: \(error)\n".utf8))
    exit(70)
}

signal(SIGPIPE, SIG_IGN)
var signalSources: [DispatchSourceSignal] = []
for signalNumber in [SIGTERM, SIGINT] {
    signal(signalNumber, SIG_IGN)
    // The main queue: this top-level code is main-actor isolated, and so is the handler.
    let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
    source.setEventHandler {
        logger.info("shutting_down", ["signal": signalNumber == SIGTERM ? "SIGTERM" : "SIGINT"])
        server.shutdown()
        exit(0)
    }
    source.resume()
    signalSources.append(source)
}
dispatchMain()
