import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct ConfigurationTests {
    private func load(_ arguments: [String], environment: [String: String] = [:], file: String? = nil)
        throws(ConfigurationError) -> LoadedConfiguration {
        try ConfigurationLoader.load(arguments: arguments, environment: environment, readFile: { path in
            guard let file else { throw ConfigurationError("no such file \(path)") }
            return file
        })
    }

    @Test func defaultsAreTheEmbeddedDevelopmentServer() throws {
        let loaded = try load([])
        #expect(loaded.command == .serve)
        #expect(loaded.configuration.host == "127.0.0.1")
        #expect(loaded.configuration.port == 8080)
        #expect(loaded.configuration.dataDirectory == "./data")
        #expect(!loaded.configuration.enablesEcho)
        #expect(loaded.configuration.fsyncPolicy == .always)
    }

    @Test func flagsOverrideEnvironmentOverrideFile() throws {
        let file = "port = 7000\nhost = ::1\ncampus = North  # comment\ncampus = South\n"
        let environment = ["BANGBANG_CONFIG": "/etc/bangbang.conf", "BANGBANG_PORT": "7001", "BANGBANG_DEV": "true"]
        let loaded = try load(["--port", "7002", "--echo", "--admin-phone", "13800138000", "--fsync=interval:5"],
                              environment: environment, file: file)
        #expect(loaded.configuration.port == 7002)
        #expect(loaded.configuration.host == "::1")
        #expect(loaded.configuration.campuses == ["North", "South"])
        #expect(loaded.configuration.isDevelopment)
        #expect(loaded.configuration.enablesEcho)
        #expect(loaded.configuration.adminPhones == ["13800138000"])
        #expect(loaded.configuration.fsyncPolicy == .interval(milliseconds: 5))
    }

    @Test func aHigherSourceReplacesAList() throws {
        let loaded = try load(["--campus", "East"], environment: ["BANGBANG_CAMPUS": "North, South"])
        #expect(loaded.configuration.campuses == ["East"])
        #expect(try load([], environment: ["BANGBANG_CAMPUS": "North, South"]).configuration.campuses == ["North", "South"])
    }

    @Test(arguments: [
        (["--port", "70000"], "--port"),
        (["--port", "abc"], "--port"),
        (["--port"], "--port"),
        (["--bogus"], "--bogus"),
        (["--fsync", "sometimes"], "--fsync"),
        (["--log-level", "loud"], "--log-level"),
        (["--tls-cert", "a.pem"], "--tls-key"),
        (["--data-dir="], "--data-dir"),
        (["frobnicate"], "frobnicate"),
        (["--sms-per-ip-hourly", "-1"], "--sms-per-ip-hourly"),
        (["--sms-per-ip-hourly", "many"], "--sms-per-ip-hourly"),
        (["--host", "h", "stray"], "stray"),
        (["--requests-per-second", "-1"], "--requests-per-second"),
        (["--user-requests-per-second", "lots"], "--user-requests-per-second"),
        (["--handshakes-per-second-per-address", "1000001"], "--handshakes-per-second-per-address"),
        (["--trusted-proxy", "nginx.local"], "--trusted-proxy"),
        (["--trusted-proxy", "10.0.0.0/33"], "--trusted-proxy"),
        (["--trusted-proxy", "10.0.0.1/8"], "10.0.0.0/8"),
        (["--proxy-protocol"], "--trusted-proxy"),
        (["--move-back-ms", "-1"], "--move-back-ms"),
        (["--move-back-ms", "soon"], "--move-back-ms"),
    ])
    func refusesBadInputNamingIt(arguments: [String], mentioned: String) {
        do {
            _ = try load(arguments)
            Issue.record("expected \(arguments) to be refused")
        } catch {
            #expect(error.message.contains(mentioned), "\(error.message)")
        }
    }

    @Test func badEnvironmentAndFileValuesNameTheirSource() {
        #expect(throws: ConfigurationError.self) { try load([], environment: ["BANGBANG_PORT": "-1"]) }
        do {
            _ = try load([], environment: ["BANGBANG_PORT": "-1"])
        } catch {
            #expect(error.message.contains("BANGBANG_PORT"))
        }
        do {
            _ = try load(["--config", "x.conf"], file: "port = 1\nnonsense here\n")
            Issue.record("expected refusal")
        } catch {
            #expect(error.message.contains("x.conf:2"))
        }
    }

    @Test func smsPerIPLimitDefaultsToTwentyAndAcceptsZeroForUnlimited() throws {
        #expect(try load([]).configuration.smsPerIPHourly == 20)
        #expect(try load(["--sms-per-ip-hourly", "0"]).configuration.smsPerIPHourly == 0)
        #expect(try load([], environment: ["BANGBANG_SMS_PER_IP_HOURLY": "500"]).configuration.smsPerIPHourly == 500)
        #expect(try load(["--config", "b.conf"], file: "sms-per-ip-hourly = 7\n").configuration.smsPerIPHourly == 7)
    }

    @Test func rateLimitsHaveDocumentedDefaultsAndFollowPrecedence() throws {
        let defaults = try load([]).configuration
        #expect(defaults.requestsPerSecond == 50)
        #expect(defaults.userRequestsPerSecond == 100)
        #expect(defaults.handshakesPerSecondPerAddress == 100)
        let loaded = try load(["--config", "r.conf", "--requests-per-second", "0"],
                              environment: ["BANGBANG_USER_REQUESTS_PER_SECOND": "7", "BANGBANG_REQUESTS_PER_SECOND": "9"],
                              file: "requests-per-second = 3\nuser-requests-per-second = 4\nhandshakes-per-second-per-address = 5\n")
        #expect(loaded.configuration.requestsPerSecond == 0)
        #expect(loaded.configuration.userRequestsPerSecond == 7)
        #expect(loaded.configuration.handshakesPerSecondPerAddress == 5)
        let help = ConfigurationLoader.helpText()
        #expect(help.contains("--requests-per-second N") && help.contains("BANGBANG_HANDSHAKES_PER_SECOND_PER_ADDRESS"))
    }

    @Test func trustedProxiesAreCIDRRangesFromEverySource() throws {
        #expect(try load([]).configuration.trustedProxies.isEmpty, "no one is trusted by default")
        #expect(!(try load([]).configuration.expectsProxyProtocol))
        let flags = try load(["--trusted-proxy", "127.0.0.1", "--trusted-proxy", "fd00::/8", "--proxy-protocol"])
        #expect(flags.configuration.trustedProxies.map(\.description) == ["127.0.0.1/32", "fd00::/8"])
        #expect(flags.configuration.expectsProxyProtocol)
        let environment = try load([], environment: ["BANGBANG_TRUSTED_PROXY": "10.0.0.0/8, 192.0.2.1"])
        #expect(environment.configuration.trustedProxies.map(\.description) == ["10.0.0.0/8", "192.0.2.1/32"])
        let file = try load(["--config", "p.conf"], file: "trusted-proxy = 10.1.0.0/16\nproxy-protocol = true\n")
        #expect(file.configuration.trustedProxies.map(\.description) == ["10.1.0.0/16"])
        #expect(file.configuration.expectsProxyProtocol)
    }

    @Test func commandsAndHelp() throws {
        #expect(try load(["check-config", "--port", "1"]).command == .checkConfig)
        #expect(try load(["--help"]).command == .help)
        #expect(try load(["--version"]).command == .version)
        let help = ConfigurationLoader.helpText()
        for setting in SettingsTable.all {
            #expect(help.contains("--\(setting.name)"))
            #expect(help.contains(setting.environmentVariable))
        }
        #expect(help.contains("(default: 8080)"))
    }
}

@Suite struct DerivedSettingsTests {
    @Test func theLeaseMovesBackOnlyWhenAskedAndNeverSoonerThanALeaseTime() throws {
        var configuration = try ConfigurationLoader.load(arguments: ["--lease-ms", "2000"], environment: [:],
                                                         readFile: { _ in "" }).configuration
        #expect(configuration.moveBackMilliseconds == 0)
        #expect(ClusterNode.leaseConfiguration(for: configuration).handBacksPerRound == 0)
        configuration.moveBackMilliseconds = 30_000
        let moving = ClusterNode.leaseConfiguration(for: configuration)
        #expect(moving.duration == .milliseconds(2_000))
        #expect(moving.handBacksPerRound == 1 && moving.handBackGrace == .seconds(30))
        // Shorter than a lease: a node that died just after a heartbeat is not live that long.
        configuration.moveBackMilliseconds = 500
        #expect(ClusterNode.leaseConfiguration(for: configuration).handBackGrace == .milliseconds(2_000))
        let loaded = try ConfigurationLoader.load(arguments: ["--move-back-ms", "45000"], environment: [:], readFile: { _ in "" })
        #expect(loaded.configuration.moveBackMilliseconds == 45_000)
    }

    /// Several pairs need a cluster, run every client's session on its node and hand pairs back
    /// to the node ranking first for them after a lease time whatever `--move-back-ms` says.
    @Test func severalPairsNeedNATSRunSessionsOnEveryNodeAndAlwaysHandBack() throws {
        func load(_ arguments: [String]) throws -> ServerConfiguration {
            try ConfigurationLoader.load(arguments: arguments, environment: [:], readFile: { _ in "" }).configuration
        }
        #expect(throws: ConfigurationError.self) { try load(["--partitions", "4"]) }
        #expect(throws: ConfigurationError.self) { try load(["--nats", "nats://127.0.0.1:4222", "--partitions", "65"]) }
        let single = try load(["--nats", "nats://127.0.0.1:4222"])
        #expect(single.partitions == 1 && !single.isPartitioned && !single.runsSessionsOnEveryNode)
        let pairs = try load(["--nats", "nats://127.0.0.1:4222", "--partitions", "4", "--lease-ms", "2000"])
        #expect(pairs.isPartitioned && pairs.runsSessionsOnEveryNode && pairs.clusterSessions == .relay)
        let leases = ClusterNode.leaseConfiguration(for: pairs)
        #expect(leases.handBacksPerRound == 1 && leases.handBackGrace == .milliseconds(2_000))
        let fromEnvironment = try ConfigurationLoader.load(arguments: ["--nats", "nats://127.0.0.1:4222"],
                                                           environment: ["BANGBANG_PARTITIONS": "3"], readFile: { _ in "" })
        #expect(fromEnvironment.configuration.partitions == 3)
    }

    @Test func pongTimeoutIsHalfThePingIntervalButNeverUnderFiveSeconds() {
        #expect(Server.pongTimeout(pingIntervalSeconds: 30) == 15_000)
        #expect(Server.pongTimeout(pingIntervalSeconds: 10) == 5_000)
        #expect(Server.pongTimeout(pingIntervalSeconds: 2) == 5_000)
        #expect(Server.pongTimeout(pingIntervalSeconds: 0) == Server.minimumPongTimeoutMilliseconds)
    }
}
