import BangbangCore
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

/// `--cancel-grace-seconds`, `--cancel-fee` and `--auto-confirm-hours`: OrderRules' defaults,
/// listed by `--help`, refused when nonsense, and turned into the rules the server decides by.
@Suite struct OrderRulesConfigurationTests {
    private func load(_ arguments: [String], environment: [String: String] = [:]) throws(ConfigurationError) -> ServerConfiguration {
        try ConfigurationLoader.load(arguments: arguments, environment: environment,
                                     readFile: { _ in throw ConfigurationError("no files here") }).configuration
    }

    @Test func defaultsAreTheOrderRulesDefaults() throws {
        let defaults = try load([])
        let rules = OrderRules()
        #expect(defaults.cancelGraceSeconds == 120 && Int64(defaults.cancelGraceSeconds) * 1000 == rules.cancellationGrace)
        #expect(defaults.cancelFee == 200 && Cents(defaults.cancelFee) == rules.cancellationFee)
        #expect(defaults.autoConfirmHours == 24 && Int64(defaults.autoConfirmHours) * 3_600_000 == rules.autoConfirmAfter)
        #expect(Application.orderRules(from: defaults) == rules)
    }

    @Test func flagsAndEnvironmentSetTheRules() throws {
        var configuration = try load(["--cancel-grace-seconds", "0", "--cancel-fee=150", "--campus", "North"],
                                     environment: ["BANGBANG_AUTO_CONFIRM_HOURS": "2"])
        let rules = Application.orderRules(from: configuration)
        #expect(rules.cancellationGrace == 0)
        #expect(rules.cancellationFee == 150)
        #expect(rules.autoConfirmAfter == 2 * 3_600_000)
        #expect(rules.campuses == ["North"])
        configuration.autoConfirmHours = 720
        #expect(Application.orderRules(from: configuration).autoConfirmAfter == 30 * 24 * 3_600_000)
        #expect(rules.ratingWindow == 7 * 86_400_000)
        configuration.ratingWindowDays = 0
        #expect(Application.orderRules(from: configuration).ratingWindow == 0)
        #expect(try load(["--rating-window-days", "30"]).ratingWindowDays == 30)
    }

    @Test(arguments: [
        ["--cancel-grace-seconds", "-1"],
        ["--cancel-grace-seconds", "two minutes"],
        ["--cancel-grace-seconds", "86401"],
        ["--cancel-fee", "-5"],
        ["--cancel-fee", "50001"],
        ["--cancel-fee", "2.5"],
        ["--auto-confirm-hours", "0"],
        ["--auto-confirm-hours", "721"],
        ["--auto-confirm-hours", ""],
        ["--rating-window-days", "-1"],
        ["--rating-window-days", "367"],
    ])
    func nonsenseIsRefusedNamingTheFlagAndTheRange(arguments: [String]) {
        do {
            _ = try load(arguments)
            Issue.record("expected \(arguments) to be refused")
        } catch {
            #expect(error.message.contains(arguments[0]), "\(error.message)")
            #expect(error.message.contains("expected an integer in"), "\(error.message)")
        }
    }

    @Test func helpListsThemWithTheirDefaults() {
        let lines = ConfigurationLoader.helpText().split(separator: "\n")
        for (flag, placeholder, value) in [("cancel-grace-seconds", "SECONDS", "120"), ("cancel-fee", "FEN", "200"),
                                           ("auto-confirm-hours", "HOURS", "24"), ("rating-window-days", "DAYS", "7")] {
            let line = lines.first { $0.contains("--\(flag) \(placeholder)") }
            #expect(line?.contains("(default: \(value))") == true, "\(flag): \(line ?? "missing")")
        }
    }
}
