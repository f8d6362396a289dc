import Testing
@testable import loadtest

@Suite struct ArgumentParserTests {
    private func options(_ arguments: [String]) throws -> Options {
        guard case .run(let options) = try ArgumentParser.parse(arguments, cores: 2) else {
            Issue.record("expected a run command")
            throw ArgumentError(message: "not a run")
        }
        return options
    }

    private func error(_ arguments: [String]) -> String? {
        do {
            _ = try ArgumentParser.parse(arguments, cores: 2)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func echoDefaults() throws {
        let parsed = try options(["echo", "--url", "ws://127.0.0.1:8080/echo"])
        #expect(parsed.connections == 1)
        #expect(parsed.window == 16)
        #expect(parsed.messageSize == 100)
        #expect(parsed.threads == 2)
        #expect(parsed.url == TargetURL(isSecure: false, host: "127.0.0.1", port: 8080, path: "/echo"))
        #expect(parsed.effectiveSources == 1)
    }

    @Test func connectionsScenarioDefaultsToAThousand() throws {
        #expect(try options(["connections", "--url", "ws://h:1/ws"]).connections == 1000)
    }

    @Test func flagsAcceptInlineValuesAndUnderscores() throws {
        let parsed = try options(["connections", "--url=wss://example.org/ws", "--connections=10_000", "--compress",
                                  "--duration", "2.5", "--server-pid", "42", "--json", "out.json"])
        #expect(parsed.connections == 10_000)
        #expect(parsed.compress)
        #expect(parsed.durationSeconds == 2.5)
        #expect(parsed.serverPID == 42)
        #expect(parsed.jsonPath == "out.json")
        #expect(parsed.url.isSecure && parsed.url.port == 443)
        #expect(parsed.effectiveSources == 0)
    }

    @Test func errorsNameTheFlag() {
        #expect(error(["echo", "--url", "ws://h/", "--window", "0"])?.hasPrefix("--window:") == true)
        #expect(error(["echo", "--url", "ws://h/", "--window"]) == "--window needs a value")
        #expect(error(["echo", "--url", "ws://h/", "--frobnicate"])?.contains("--frobnicate") == true)
        #expect(error(["echo", "--url", "ws://h/", "--compress=yes"]) == "--compress takes no value")
        #expect(error(["echo", "--url", "ws://h/", "--duration", "-1"])?.hasPrefix("--duration:") == true)
        #expect(error(["echo", "--url", "ws://h/", "--connections", "1", "--connections", "2"]) == "--connections given twice")
        #expect(error(["echo", "--url", "ws://h/", "stray"])?.contains("stray") == true)
    }

    @Test func flagOfAnotherScenarioIsRefused() {
        #expect(error(["echo", "--url", "ws://h/", "--runners", "5"]) == "--runners does not apply to the echo scenario")
        #expect(error(["connections", "--url", "ws://h/", "--window", "5"]) == "--window does not apply to the connections scenario")
    }

    @Test func urlIsRequiredAndChecked() {
        #expect(error(["echo"])?.contains("--url is required") == true)
        #expect(error(["echo", "--url", "http://h/"])?.hasPrefix("--url:") == true)
        #expect(error(["echo", "--url", "ws://h:0/"])?.hasPrefix("--url:") == true)
        #expect(error(["echo", "--url", "ws://h:99999/"])?.hasPrefix("--url:") == true)
        #expect(error(["echo", "--url", "ws:///path"])?.hasPrefix("--url:") == true)
    }

    @Test func sourcesNeedALoopbackTarget() {
        #expect(error(["echo", "--url", "ws://10.0.0.1:80/", "--sources", "2"])?.contains("loopback") == true)
    }

    @Test func raceRefusesSeveralProcesses() {
        #expect(error(["race", "--url", "ws://h/", "--admin-phone", "+8613800000000", "--processes", "2"])?
            .hasPrefix("--processes:") == true)
    }

    @Test func protocolScenariosNeedTheAdministrator() {
        #expect(error(["feed", "--url", "ws://h/"])?.contains("--admin-phone") == true)
    }

    @Test func feedRunnersMaySpreadOverTheNodesOfACluster() throws {
        let parsed = try options(["feed", "--url", "ws://127.0.0.1:1/ws", "--admin-phone", "+8613800000000",
                                  "--runner-url", "ws://127.0.0.1:2/ws", "--runner-url=ws://127.0.0.1:3/ws"])
        #expect(parsed.runnerURLs.map(\.port) == [2, 3])
        #expect(parsed.url.port == 1)
        #expect(try options(["feed", "--url", "ws://h/", "--admin-phone", "+8613800000000"]).runnerURLs.isEmpty)
        #expect(error(["feed", "--url", "ws://h/", "--admin-phone", "+8613800000000", "--runner-url", "http://h/"])?
            .hasPrefix("--runner-url:") == true)
        #expect(error(["durable", "--url", "ws://h/", "--runner-url", "ws://h:2/"]) != nil)
    }

    @Test func unknownScenarioListsTheKnownOnes() {
        #expect(error(["fly", "--url", "ws://h/"])?.contains("echo, connections") == true)
        #expect(error([])?.contains("no scenario") == true)
    }

    @Test func compareAndHelpCommands() throws {
        #expect(try ArgumentParser.parse(["compare", "a.json", "b.json"], cores: 1) == .compare(first: "a.json", second: "b.json"))
        #expect(try ArgumentParser.parse(["--help"], cores: 1) == .help(nil))
        #expect(try ArgumentParser.parse(["echo", "--help"], cores: 1) == .help(.echo))
        #expect(error(["compare", "a.json"])?.contains("usage") == true)
    }

    @Test func sharesSplitTheTotalExactly() {
        for total in [0, 1, 7, 10_000, 19_999] {
            for count in 1...5 {
                let shares = (0..<count).map { Options.share(of: total, index: $0, count: count) }
                #expect(shares.reduce(0, +) == total)
                #expect((shares.max() ?? 0) - (shares.min() ?? 0) <= 1)
            }
        }
    }

    @Test func childArgumentsDropParentOnlyFlags() {
        let child = ProcessSplitter.childArguments(
            from: ["connections", "--url", "ws://h/", "--processes", "3", "--json=r.json", "--quiet", "--compress"],
            index: 1, count: 3, jsonPath: "/tmp/c.json")
        #expect(child == ["connections", "--url", "ws://h/", "--compress",
                          "--process-index", "1", "--process-count", "3", "--json", "/tmp/c.json", "--quiet"])
    }
}

@Suite struct TargetURLTests {
    @Test func parsesHostPortAndPath() throws {
        let url = try TargetURL(parsing: "ws://localhost:9000/echo?x=1#frag")
        #expect(url == TargetURL(isSecure: false, host: "localhost", port: 9000, path: "/echo?x=1"))
        #expect(url.hostHeader == "localhost:9000")
    }

    @Test func defaultsPortAndPath() throws {
        #expect(try TargetURL(parsing: "wss://example.org") == TargetURL(isSecure: true, host: "example.org", port: 443, path: "/"))
        #expect(try TargetURL(parsing: "ws://example.org").hostHeader == "example.org")
    }

    @Test func bracketedIPv6() throws {
        let url = try TargetURL(parsing: "ws://[::1]:8080/ws")
        #expect(url.host == "::1")
        #expect(url.hostHeader == "[::1]:8080")
        #expect(!url.isIPv4Loopback)
    }

    @Test func rejectsMalformedAuthorities() {
        for text in ["ws://[::1/ws", "ws://user@h/", "ws://h:x/", "ws://:80/", "ws://h/a b"] {
            #expect(throws: TargetURL.ParseError.self, "\(text)") { try TargetURL(parsing: text) }
        }
    }
}

@Suite struct ProcessResourcesTests {
    @Test func readsResidentSizeFromStatusText() {
        let status = "Name:\tbangbang\nVmPeak:\t  900 kB\nVmRSS:\t   12345 kB\nRssAnon:\t 100 kB\n"
        #expect(ProcessResources.parseResidentKiB(status: status) == 12345)
        #expect(ProcessResources.parseResidentKiB(status: "Name:\tx\n") == nil)
    }

    @Test func ownResidentSizeIsReadable() {
        #expect((ProcessResources.residentKiB(of: getpidValue()) ?? 0) > 0)
    }

    private func getpidValue() -> Int32 { ProcessResources.currentProcessID }
}

@Suite struct ProcessStatTests {
    @Test func cpuTimeIsCountedFromTheLastParenthesis() {
        let stat = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 100 0 0"
        #expect(ProcessResources.parseCPUMicroseconds(stat: stat, ticksPerSecond: 100) == 3_000_000)
        #expect(ProcessResources.parseCPUMicroseconds(stat: "garbage", ticksPerSecond: 100) == nil)
    }
}

@Suite struct SchedstatTests {
    @Test func waitIsTheSecondField() {
        #expect(ProcessResources.parseRunQueueWaitNanoseconds(schedstat: "2480000000 28610000000 1234\n") == 28_610_000_000)
        #expect(ProcessResources.parseRunQueueWaitNanoseconds(schedstat: "17") == nil)
    }
}
