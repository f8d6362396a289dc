// Builds what every client of a run shares, then hands over to the scenario.
import SocketServer
import WebSocketProtocol

enum ScenarioRunner {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(_ options: Options) throws(Failure) -> RunResult {
        var settings = ClientSettings(url: options.url)
        if options.compress {
            // The server always answers with both no_context_takeover parameters; offering
            // ours up front keeps the client's compressor stateless too.
            settings.deflate = DeflateOffer(requestsClientNoContextTakeover: true)
        }
        if options.url.isSecure {
            do {
                settings.tls = try TLSContext(configuration: .client(verifiesPeer: options.verifiesCertificates))
            } catch {
                throw Failure(description: "TLS: \(error)")
            }
        }
        switch options.scenario {
        case .echo:
            return EchoScenario.run(options, settings: settings)
        case .connections:
            do { return try ConnectionsScenario.run(options, settings: settings) } catch {
                throw Failure(description: "\(error)")
            }
        case .durable:
            do { return try DurableScenario.run(options, settings: settings) } catch {
                throw Failure(description: "\(error)")
            }
        case .feed:
            do { return try FeedScenario.run(options, settings: settings) } catch {
                throw Failure(description: "\(error)")
            }
        case .race:
            do { return try RaceScenario.run(options, settings: settings) } catch {
                throw Failure(description: "\(error)")
            }
        case .errand:
            do { return try ErrandScenario.run(options, settings: settings) } catch {
                throw Failure(description: "\(error)")
            }
        }
    }
}
