// Where SMS codes go. The embedded default logs them (development only, announced loudly at
// start-up); a deployment configures a command that delivers them (`--sms-command`), run with
// the phone and the code in its environment so neither appears in a process listing.
import Foundation

package protocol SMSProvider: Sendable {
    /// Whether replies may carry the code (`devCode`): only the development provider in --dev.
    var revealsCodes: Bool { get }
    func send(code: String, to phone: String, purpose: String)
}

package struct DevelopmentSMSProvider: SMSProvider {
    package let logger: Logger
    package let revealsCodes: Bool

    package init(logger: Logger, revealsCodes: Bool) {
        self.logger = logger
        self.revealsCodes = revealsCodes
    }

    package func send(code: String, to phone: String, purpose: String) {
        logger.info("dev_sms_code", ["phone": phone, "purpose": purpose, "code": code])
    }
}

package struct CommandSMSProvider: SMSProvider {
    let command: String
    package let logger: Logger

    package init(command: String, logger: Logger) {
        self.command = command
        self.logger = logger
    }
    package var revealsCodes: Bool { false }

    package func send(code: String, to phone: String, purpose: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["BANGBANG_SMS_PHONE"] = phone
        environment["BANGBANG_SMS_CODE"] = code
        environment["BANGBANG_SMS_PURPOSE"] = purpose
        process.environment = environment
        let logger = logger
        process.terminationHandler = { finished in
            if finished.terminationStatus != 0 {
                logger.error("sms_command_failed", ["phone": phone, "status": Int(finished.terminationStatus)])
            }
        }
        do { try process.run() } catch {
            logger.error("sms_command_failed", ["phone": phone, "error": "\(error)"])
        }
    }
}
