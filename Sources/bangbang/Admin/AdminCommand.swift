// What `bangbang admin` can be asked, parsed from the command line, and the `/ws` request each
// command becomes. Both modes (a running server over `/ws`, or a stopped server's data
// directory) run the same requests, so they answer the same way.
import BangbangApplication
import BangbangProtocol
import BangbangServer

enum AdminCommand: Sendable, Equatable {
    /// An administrator's request: sent over `/ws` to a running server, or run on a stopped
    /// server's data directory (`OfflineAdmin`).
    case administer(OfflineAdmin.Action)
    case journal
    case backup(directory: String)
    case restore(directory: String, force: Bool)

    /// The request this command sends (nil for `journal`, `backup` and `restore`, which work on
    /// the data directory's files).
    var request: (operation: String, data: JSONValue)? {
        guard case .administer(let action) = self else { return nil }
        return action.request
    }

    /// Whether the command changes state (offline, it is journaled before the CLI exits).
    var isChange: Bool {
        guard case .administer(let action) = self else { return false }
        return action.isChange
    }
}

extension OfflineAdmin.Action {
    /// The `/ws` request of this action.
    var request: (operation: String, data: JSONValue) {
        switch self {
        case .pendingVerifications: ("admin.pending_verifications", [:])
        case .approve(let user): ("admin.decide_verification", ["user_id": .integer(user), "decision": "approve"])
        case .reject(let user, let reason):
            ("admin.decide_verification", ["user_id": .integer(user), "decision": "reject", "reason": .string(reason)])
        case .feedback(let limit, let before):
            ("admin.list_feedback", .object([
                "limit": limit.map(JSONValue.integer), "before": before.map(JSONValue.integer),
            ].compactMapValues { $0 }))
        case .user(let id): ("admin.user", ["user_id": .integer(id)])
        case .userByPhone(let phone): ("admin.user", ["phone": .string(phone)])
        case .order(let id): ("admin.order", ["order_id": .integer(id)])
        case .grantAdmin(let user): ("admin.grant_admin", ["user_id": .integer(user)])
        case .revokeAdmin(let user): ("admin.revoke_admin", ["user_id": .integer(user)])
        }
    }

    var isChange: Bool {
        switch self {
        case .approve, .reject, .grantAdmin, .revokeAdmin: true
        case .pendingVerifications, .feedback, .user, .userByPhone, .order: false
        }
    }
}

/// A parsed `bangbang admin` command line.
struct AdminInvocation: Sendable {
    var command: AdminCommand
    /// `--url`; nil: from the configuration's host, port and TLS certificate.
    var url: String?
    /// `--ca-file`: trust only these certificates for wss://.
    var caFile: String?
    /// `--server-name`: the name the server's certificate must carry.
    var serverName: String?
    var printsJSON = false
    /// `offline` forces the data-directory mode, `online` the `/ws` mode; `auto` picks online
    /// when the data directory is locked by a running server.
    var mode = Mode.auto
    /// Server settings (`--data-dir`, `--config`, …) handed to the configuration loader, so the
    /// CLI reads the same configuration as the server it administers.
    var serverArguments: [String] = []

    enum Mode: Sendable { case auto, online, offline }

    static func parse(_ arguments: [String]) throws(ConfigurationError) -> AdminInvocation {
        var positional: [String] = []
        var reason: String?
        var phone: String?
        var limit: Int64?
        var before: Int64?
        var url: String?
        var caFile: String?
        var serverName: String?
        var printsJSON = false
        var force = false
        var mode = Mode.auto
        var serverArguments: [String] = []
        var remaining = arguments[...]
        func value(_ name: String, _ inline: String?) throws(ConfigurationError) -> String {
            guard let value = inline ?? remaining.popFirst() else { throw ConfigurationError("\(name) needs a value") }
            return value
        }
        func number(_ name: String, _ text: String) throws(ConfigurationError) -> Int64 {
            guard let value = Int64(text), value >= 1 else {
                throw ConfigurationError("invalid value '\(text)' for \(name): expected a positive integer")
            }
            return value
        }
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--") else {
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var inline: String?
            if let equals = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            switch name {
            case "json": printsJSON = true
            case "force": force = true
            case "offline": mode = .offline
            case "online": mode = .online
            case "url": url = try value("--url", inline)
            case "ca-file": caFile = try value("--ca-file", inline)
            case "server-name": serverName = try value("--server-name", inline)
            case "reason": reason = try value("--reason", inline)
            case "phone": phone = try value("--phone", inline)
            case "limit": limit = try number("--limit", try value("--limit", inline))
            case "before": before = try number("--before", try value("--before", inline))
            case "config":
                serverArguments += ["--config", try value("--config", inline)]
            default:
                guard let takesValue = ServerOptions.takesValue(name) else {
                    throw ConfigurationError("unknown option '--\(name)'; see bangbang admin --help")
                }
                serverArguments.append("--\(name)")
                if takesValue { serverArguments.append(try value("--\(name)", inline)) }
                else if let inline { serverArguments[serverArguments.count - 1] += "=\(inline)" }
            }
        }
        guard let verb = positional.first else { throw ConfigurationError("which command? see bangbang admin --help") }
        let operands = Array(positional.dropFirst())
        func onlyID(_ label: String) throws(ConfigurationError) -> Int64 {
            guard operands.count == 1 else { throw ConfigurationError("usage: bangbang admin \(verb) \(label)") }
            return try number(label, operands[0])
        }
        func noOperands() throws(ConfigurationError) {
            guard operands.isEmpty else { throw ConfigurationError("'\(verb)' takes no operands") }
        }
        let command: AdminCommand
        switch verb {
        case "pending": try noOperands(); command = .administer(.pendingVerifications)
        case "approve": command = .administer(.approve(user: try onlyID("USER_ID")))
        case "reject":
            let user = try onlyID("USER_ID")
            guard let reason, !reason.isEmpty else {
                throw ConfigurationError("reject needs --reason TEXT: the applicant reads it")
            }
            command = .administer(.reject(user: user, reason: reason))
        case "feedback": try noOperands(); command = .administer(.feedback(limit: limit, before: before))
        case "user":
            if let phone {
                try noOperands()
                command = .administer(.userByPhone(phone))
            } else {
                command = .administer(.user(id: try onlyID("USER_ID | --phone PHONE")))
            }
        case "order": command = .administer(.order(id: try onlyID("ORDER_ID")))
        case "grant-admin": command = .administer(.grantAdmin(user: try onlyID("USER_ID")))
        case "revoke-admin": command = .administer(.revokeAdmin(user: try onlyID("USER_ID")))
        case "journal": try noOperands(); command = .journal
        case "backup", "restore":
            guard operands.count == 1, !operands[0].isEmpty else { throw ConfigurationError("usage: bangbang admin \(verb) DIR") }
            command = verb == "backup" ? .backup(directory: operands[0]) : .restore(directory: operands[0], force: force)
        default: throw ConfigurationError("unknown admin command '\(verb)'; see bangbang admin --help")
        }
        var invocation = AdminInvocation(command: command)
        invocation.url = url
        invocation.caFile = caFile
        invocation.serverName = serverName
        invocation.printsJSON = printsJSON
        invocation.mode = mode
        invocation.serverArguments = serverArguments
        return invocation
    }

    static let helpText = """
    usage: bangbang admin COMMAND [OPERANDS] [options]

    Administers a Bangbang server: against the running server over its /ws endpoint, or, when the
    server is stopped, directly on its data directory (changes are journaled exactly as the server
    would journal them, and the server picks them up at its next start).

    commands:
      pending                        runner verifications waiting for review, oldest first
      approve USER_ID                approve a pending runner verification
      reject USER_ID --reason TEXT   reject one; the applicant reads the reason
      feedback [--limit N] [--before ID]
                                     user feedback, newest first (--before: page below this id)
      user USER_ID | user --phone PHONE
                                     a user in full: phone, verification, administrator
      order ORDER_ID                 an order in full, as its publisher sees it
      grant-admin USER_ID            make a user an administrator
      revoke-admin USER_ID           revoke a grant (administrators by --admin-phone stay)
      journal                        journal segments and snapshots: files, sizes, sequence ranges,
                                     record counts by kind (segments only while the server runs)
      backup DIR                     copy the data directory into DIR (new or empty), also while
                                     the server runs: snapshot, journal, archive, session secret,
                                     and manifest.json (sizes, SHA-256) written last
      restore DIR [--force]          check the backup in DIR against its manifest, then copy it
                                     into --data-dir; the server must be stopped, and a non-empty
                                     data directory is replaced only with --force

    options:
      --data-dir PATH                the server's data directory (default ./data); any server
      --config PATH                  setting (--config, --shards-per-type, …) may be given, so the
                                     CLI reads the configuration the server uses
      --url URL                      the running server's /ws: ws://… or wss://… (default: from
                                     --host and --port, wss:// when --tls-cert is set; loopback)
      --ca-file PATH                 wss://: trust only the certificates in this PEM file (a
                                     private CA); default: the system's CAs and the server's own
                                     --tls-cert file, so a self-signed certificate just works
      --server-name NAME             wss://: the name the certificate must carry (default: the
                                     name in the server's --tls-cert when the URL is loopback)
      --online | --offline           force a mode; by default the CLI talks to the server when the
                                     data directory is locked by one, and works offline otherwise
      --json                         print the reply as JSON instead of a table

    How it authenticates: at every start the server writes a fresh random secret to
    <data-dir>/admin-secret (mode 0600). The CLI reads it and sends auth.admin_secret, which the
    server accepts from loopback connections only; the connection then acts as the built-in
    administrator (user 0 in the journal). Run the CLI on the server's machine, as its user: a
    server that serves only TLS is reached with wss://127.0.0.1 (still loopback), its certificate
    checked as above.

    exit status: 0 done, 1 the server refused (the reason is printed), 64 usage, 69 server unreachable,
    70 the data directory cannot be opened.
    """
}
