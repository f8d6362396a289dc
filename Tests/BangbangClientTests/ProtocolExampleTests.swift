// Every example message in protocol/*.md is read with the library's own types, strictly: a
// member the types do not know fails the test, so each documented field has a home. And every
// operation the schemas describe has a typed request.
import BangbangProtocol
import Foundation
import Testing
@testable import BangbangClient

@Suite struct ProtocolExampleTests {
    /// One request of every operation, with sample fields.
    static let requests: [any BangbangRequest] = {
        let draft = OrderDraft.bounty(BountyDetails(title: "t", description: "d"), campus: "North",
                                      deadline: Timestamp(milliseconds: 1), tip: 0)
        var all: [any BangbangRequest] = [
            RequestCode(phone: "13800138000"), LogInWithCode(phone: "13800138000", code: "1"),
            LogInWithPassword(phone: "13800138000", password: "p"), LogInAsAdministrator(secret: "s"), LogOut(),
            ListSessions(), RevokeSession(sessionID: "0"), SetPassword(password: "p"),
            ChangePassword(oldPassword: "a", newPassword: "b"),
            GetProfile(), UpdateProfile(nickname: "n"), ChangePhone(phone: "1", code: "1"),
            SubmitVerification(realName: "r", studentID: "s", school: "North"), GetVerification(),
            SubmitFeedback(text: "t"), GetServerInfo(),
            PendingVerifications(), DecideVerification(userID: 1, decision: .approve), ListFeedback(),
            GrantAdministrator(userID: 1), RevokeAdministrator(userID: 1), LookUpUser(.id(1)), LookUpOrder(orderID: 1),
            GetAdminStatistics(),
            PublishOrder(draft), GetOrder(1), DeliverOrder(1), CancelOrder(1), RaiseTip(1, to: 2), RateOrder(1, stars: 5),
            ListBoard(BoardFilter(types: [])), SubscribeBoard(BoardFilter(types: [.express])), UnsubscribeBoard(),
            GetBoardStatistics(), MyOrders(), GetEarnings(),
        ]
        all += OrderStep.Step.allCases.map { OrderStep($0, 1) }
        return all
    }()

    /// Reads a reply's `data` as `operation`'s typed reply.
    static func decodeReply(of operation: String, _ data: JSONValue) throws -> Any {
        if operation == "auth.resume" { return try ResumeResult(wire: data, at: []) }  // the connection's own
        guard let request = requests.first(where: { $0.operation == operation }) else {
            throw ProtocolExamples.Failure(description: "no typed request for \(operation)")
        }
        return try decode(request, data)
    }

    private static func decode<Request: BangbangRequest>(_ request: Request, _ data: JSONValue) throws -> Any {
        try request.decodeReply(data)
    }

    /// Decodes `body` with unknown members collected, and fails on any.
    static func strictly<T>(_ example: ProtocolExample, _ body: () throws -> T) throws -> T {
        let context = WireContext()
        let value = try WireContext.$current.withValue(context) { try body() }
        #expect(context.unknownMembers.isEmpty,
                "members the library's types do not know: \(context.unknownMembers.map(\.description)) in \(example)")
        return value
    }

    @Test func everyExampleMessageDecodesWithTheLibrarysTypes() throws {
        let examples = try ProtocolExamples.all()
        #expect(examples.count > 40, "the examples were not found: \(examples.count)")
        var operationsByID: [String: [JSONValue: String]] = [:]
        var counts = (requests: 0, replies: 0, errors: 0, personal: 0, board: 0, data: 0)
        for example in examples {
            let message = example.message
            if case .string(let operation)? = message["op"] {
                counts.requests += 1
                #expect(Self.requests.contains { $0.operation == operation } || operation == "auth.resume",
                        "no typed request for \(operation): \(example)")
                operationsByID[example.file, default: [:]][message["id"] ?? .null] = operation
            } else if message["ok"] != nil {
                let decoded = try Self.strictly(example) { try ServerMessage(wire: message) }
                guard case .reply(_, let result) = decoded else {
                    Issue.record("not a reply: \(example)")
                    continue
                }
                switch result {
                case .success(let data):
                    counts.replies += 1
                    let operation = operationsByID[example.file]?[message["id"] ?? .null] ?? example.section
                    let name = try #require(operation, "a reply whose operation the text does not say: \(example)")
                    _ = try Self.strictly(example) { try Self.decodeReply(of: name, data) }
                case .failure(let error):
                    counts.errors += 1
                    if case .other(let code) = error.code { Issue.record("an error code the library does not know: \(code)") }
                }
            } else if message["event"] != nil {
                let decoded = try Self.strictly(example) { try ServerMessage(wire: message) }
                switch decoded {
                case .personal(let event):
                    counts.personal += 1
                    if case .unrecognized(let name, let reason) = event.kind {
                        Issue.record("the event \(name) is not understood (\(reason)): \(example)")
                    }
                case .board: counts.board += 1
                case .reply: Issue.record("an event read as a reply: \(example)")
                }
            } else {
                counts.data += 1
                let name = try #require(example.section, "reply data outside an operation's section: \(example)")
                _ = try Self.strictly(example) { try Self.decodeReply(of: name, message) }
            }
        }
        #expect(counts.requests > 10 && counts.replies > 10 && counts.errors >= 1 && counts.personal > 5
                && counts.board >= 3, "\(counts)")
    }

    @Test func everyOperationOfTheSchemasHasATypedRequest() throws {
        var operations: Set<String> = []
        let schemas = ProtocolExamples.protocolDirectory.appendingPathComponent("schemas")
        for file in try FileManager.default.contentsOfDirectory(atPath: schemas.path) where file.hasPrefix("ops-") {
            let schema = try JSONParser.parse(Array(try Data(contentsOf: schemas.appendingPathComponent(file))))
            guard case .object(let definitions)? = schema["$defs"] else { continue }
            operations.formUnion(definitions.keys.filter { $0.contains(".") })
        }
        #expect(operations.count >= 40, "\(operations.count) operations found in the schemas")
        let typed = Set(Self.requests.map(\.operation)).union(["auth.resume"])
        #expect(operations.subtracting(typed).isEmpty, "operations without a typed request: \(operations.subtracting(typed).sorted())")
        #expect(typed.subtracting(operations).isEmpty, "typed requests for operations the schemas do not have: \(typed.subtracting(operations).sorted())")
    }

    @Test func everyErrorCodeOfTheTextIsATypedCode() throws {
        var documented: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: ProtocolExamples.protocolDirectory.path)
        where file.hasSuffix(".md") {
            let text = try String(contentsOf: ProtocolExamples.protocolDirectory.appendingPathComponent(file), encoding: .utf8)
            // Error tables: "| `code` | when |" rows under a "| code |" or "| error |" header.
            var inErrorTable = false
            for line in text.components(separatedBy: "\n") {
                if line.hasPrefix("| code ") || line.hasPrefix("| error ") { inErrorTable = true; continue }
                guard line.hasPrefix("|") else { inErrorTable = false; continue }
                guard inErrorTable, let cell = line.split(separator: "|").first else { continue }
                for name in cell.split(separator: ",") {
                    let code = name.trimmingCharacters(in: .whitespaces)
                    guard code.hasPrefix("`"), code.hasSuffix("`") else { continue }
                    let bare = String(code.dropFirst().dropLast())
                    if let space = bare.firstIndex(of: " ") { documented.insert(String(bare[..<space])) } else { documented.insert(bare) }
                }
            }
        }
        #expect(documented.count > 25, "\(documented.sorted())")
        for code in documented {
            if case .other = ErrorCode(rawValue: code) { Issue.record("the documented code \(code) has no case") }
            #expect(ErrorCode(rawValue: code).rawValue == code)
        }
    }
}
