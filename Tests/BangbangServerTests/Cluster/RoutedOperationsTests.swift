// Order and account operations routed to a partition's owner over a real nats-server: the owner
// runs them as it runs a connection's, deciding on the actor's facts the request carries, and
// answers with the very reply message a connection of its own would get; bad input, an operation
// the partition does not decide and a user of another partition get a clear error and change
// nothing.
import BangbangCore
import BangbangProtocol
import Cluster
import InboxProtocol
import Foundation
import NATSClient
import NATSTestSupport
import SocketServer
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct RoutedOperationsTests {
    static let publisher = RoutedActor(user: UserID(5), isApprovedRunner: false)
    static let unverified = RoutedActor(user: UserID(6), isApprovedRunner: false)
    static let runner = RoutedActor(user: UserID(6), isApprovedRunner: true)

    static func draft(now: Timestamp) -> JSONValue {
        ["type": "express", "campus": "north", "deadline": .integer(now.adding(milliseconds: Drafts.hour).milliseconds), "tip": 300,
         "details": ["pickup_station": "Station 3", "parcel_size": "small", "drop_off_place": "Dorm 7"]]
    }

    static func reply(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        guard case .object(let members) = try JSONParser.parse(bytes) else { throw ClusterError("the reply is not an object") }
        return members
    }

    static func orderID(in reply: [String: JSONValue], publisher: UserID = publisher.user) throws -> Int64 {
        guard case .object(let data)? = reply["data"], case .object(let order)? = data["order"],
              case .integer(let id)? = order["id"] else { throw ClusterError("no order in \(reply)") }
        #expect(order["publisher"] == .integer(Int64(publisher.rawValue)))
        return id
    }

    /// An application serving `p0`'s routed requests over a nats-server, and a requester.
    final class RoutedSetup: Sendable {
        let nats: NATSCluster
        let harness: ApplicationHarness
        let owner: OwnerRequests
        let ownerConnection: NATSConnection
        let clientConnection: NATSConnection
        let client: PartitionRequests
        let partition = PartitionID(space: .boards, index: 0)
        let accounts = PartitionID(space: .accounts, index: 0)

        private init(nats: NATSCluster, harness: ApplicationHarness, ownerConnection: NATSConnection,
                     clientConnection: NATSConnection) throws {
            self.nats = nats
            self.harness = harness
            self.ownerConnection = ownerConnection
            self.clientConnection = clientConnection
            owner = OwnerRequests(requests: PartitionRequests(connection: ownerConnection), app: harness.app,
                                  map: PartitionMap(partitionCount: 1))
            client = PartitionRequests(connection: clientConnection)
            try owner.serve(partition)
            try owner.serve(accounts)
        }

        static func start() async throws -> RoutedSetup {
            let nats = try await NATSCluster.shared(size: 1)
            let ownerConnection = NATSConnection(configuration: NATSConfiguration(servers: nats.addresses, name: "owner"))
            try await ownerConnection.connect()
            let clientConnection = NATSConnection(configuration: NATSConfiguration(servers: nats.addresses, name: "session-node"))
            try await clientConnection.connect()
            return try RoutedSetup(nats: nats, harness: try ApplicationHarness(), ownerConnection: ownerConnection,
                                   clientConnection: clientConnection)
        }

        func route(_ request: RoutedRequest) async throws -> [UInt8] {
            try await client.request(partition, payload: request.encoded()).get()
        }

        func routeToAccounts(_ request: RoutedRequest) async throws -> [String: JSONValue] {
            try RoutedOperationsTests.reply(try await client.request(accounts, payload: request.encoded()).get())
        }

        func stop() async {
            owner.stopAll()
            await clientConnection.close()
            await ownerConnection.close()
        }
    }

    static func errorCode(_ reply: [String: JSONValue]) -> String? {
        guard case .object(let error)? = reply["error"], case .string(let code)? = error["code"] else { return nil }
        return code
    }

    @Test func aRoutedRequestIsReadBackAsWritten() throws {
        let request = RoutedRequest(id: "r-1", operation: "order.accept", data: ["order_id": 9], actor: Self.runner)
        let decoded = try RoutedRequest.decode(request.encoded()).get()
        #expect(decoded.id == "r-1" && decoded.operation == "order.accept" && decoded.data == ["order_id": 9])
        #expect(decoded.actor == Self.runner && decoded.clientAddress == nil)
        let anonymous = RoutedRequest(id: 2, operation: "auth.request_code", data: ["phone": "13800138000"], actor: nil,
                                      clientAddress: "2001:db8::7")
        #expect(String(decoding: anonymous.encoded(), as: UTF8.self)
                == #"{"client":{"address":"2001:db8::7"},"data":{"phone":"13800138000"},"id":2,"op":"auth.request_code"}"#)
        let read = try RoutedRequest.decode(anonymous.encoded()).get()
        #expect(read.actor == nil && read.clientAddress == "2001:db8::7" && read.operation == "auth.request_code")
        // An administrator vouched for by their own account partition, for another's command.
        let vouched = RoutedActor(user: UserID(rawValue: 4), isApprovedRunner: false, isVouchedAdministrator: true)
        let command = RoutedRequest(id: 5, operation: "admin.decide_verification", data: ["user_id": 7, "decision": "approve"], actor: vouched)
        #expect(String(decoding: command.encoded(), as: UTF8.self).contains(#""actor":{"administrator":true,"runner":false,"user":4}"#))
        #expect(try RoutedRequest.decode(command.encoded()).get().actor == vouched)
        // The built-in administrator of a node that took its admin secret: user 0, vouched for.
        let operator_ = RoutedRequest(id: 6, operation: "admin.pending_verifications", data: nil, actor: .builtInAdministrator)
        #expect(String(decoding: operator_.encoded(), as: UTF8.self).contains(#""actor":{"administrator":true,"runner":false,"user":0}"#))
        #expect(try RoutedRequest.decode(operator_.encoded()).get().actor?.isBuiltInAdministrator == true)
    }

    @Test(arguments: [
        (#"{"id": 3, "op": "order.get", "client": "10.0.0.1"}"#, JSONValue.integer(3), String?("client")),
        (#"{"id": 3, "op": "order.get", "client": {"address": ""}}"#, .integer(3), "client"),
        (#"{"id": 3, "op": "order.get", "client": {"address": "10.0.0.1", "port": 9}}"#, .integer(3), "client"),
        (#"{"id": 3, "op": "order.get", "client": {"address": "\#(String(repeating: "1", count: 65))"}}"#, .integer(3), "client"),
        (#"{"id": 3, "op": "order.get", "actor": {"user": 0, "runner": false}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "order.get", "actor": {"user": 0, "runner": false, "administrator": true}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "admin.stats", "actor": {"user": 0, "runner": false}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "admin.stats", "actor": {"user": 0, "runner": true, "administrator": true}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "admin.stats", "actor": {"user": 0, "runner": false, "administrator": true, "session": "0123456789abcdef0123456789abcdef"}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "admin.stats", "actor": {"user": -1, "runner": false, "administrator": true}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "order.get", "actor": {"user": 5, "runner": "yes"}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "order.get", "actor": {"user": 5, "runner": false, "admin": true}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "order.get", "actor": {"user": 5, "runner": false, "administrator": false}}"#, .integer(3), "actor"),
        (#"{"id": 3, "op": "order.get", "actor": {"user": 5, "runner": false, "administrator": 1}}"#, .integer(3), "actor"),
        (#"{"id": "x", "op": "order.get", "actor": {"user": 5, "runner": false}, "token": "t"}"#, .string("x"), "token"),
        (#"{"op": "order.get", "actor": {"user": 5, "runner": false}}"#, .null, "id"),
        (#"[1, 2]"#, .null, nil),
        (#"{"id": 3, "op": "#, .null, nil),
    ])
    func aMalformedRoutedRequestIsRefusedWithItsID(text: String, id: JSONValue, field: String?) throws {
        guard case .failure(let failure) = RoutedRequest.decode(Array(text.utf8)) else {
            Issue.record("accepted: \(text)")
            return
        }
        #expect(failure.id == id)
        #expect(failure.error.code == .badRequest)
        #expect(failure.error.field == field)
    }

    @Test func theOwnerRunsRoutedOrderOperationsAsItsOwnAndAnswersTheReplyItself() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let (harness, route) = (setup.harness, setup.route)

        let published = try Self.reply(try await route(RoutedRequest(id: 1, operation: "order.publish",
                                                                     data: Self.draft(now: harness.clock.now),
                                                                     actor: Self.publisher)))
        #expect(published["id"] == 1 && published["ok"] == .bool(true), "\(published)")
        let rawID = try Self.orderID(in: published)
        let id = OrderID(rawValue: UInt64(rawID))

        // The owner decides on the facts the request carries: not a verified runner, refused.
        let refused = try Self.reply(try await route(RoutedRequest(id: "a", operation: "order.accept", data: ["order_id": .integer(rawID)],
                                                                   actor: Self.unverified)))
        #expect(Self.errorCode(refused) == "runner_not_verified" && refused["id"] == "a")
        #expect(await harness.order(id)?.status == .open)
        let accepted = try Self.reply(try await route(RoutedRequest(id: "b", operation: "order.accept", data: ["order_id": .integer(rawID)],
                                                                    actor: Self.runner)))
        #expect(accepted["ok"] == .bool(true), "\(accepted)")
        #expect(await harness.order(id)?.status == .accepted)
        #expect(await harness.order(id)?.runner == Self.runner.user)

        // The reply is, byte for byte, the one a connection on the owner gets.
        let got = try await route(RoutedRequest(id: 7, operation: "order.get", data: ["order_id": .integer(rawID)], actor: Self.publisher))
        let current = try #require(await harness.order(id))
        #expect(got == Reply.success(id: 7, encodedOrderView: OrderWire.encoded(OrderView(current, viewer: Self.publisher.user))))

        // What is not routed, or not a request, gets a clear error and changes nothing.
        let notRouted = try Self.reply(try await route(RoutedRequest(id: 8, operation: "auth.resume", data: ["token": "t"],
                                                                     actor: Self.publisher)))
        #expect(Self.errorCode(notRouted) == "unknown_operation" && notRouted["id"] == 8)
        let garbage = try Self.reply(try await setup.client.request(setup.partition, payload: Array("{\"id\": 9, \"op\": ".utf8)).get())
        #expect(Self.errorCode(garbage) == "bad_request")
        let badField = try Self.reply(try await route(RoutedRequest(id: 10, operation: "order.cancel", data: ["order_id": "x"],
                                                                    actor: Self.publisher)))
        #expect(Self.errorCode(badField) == "invalid_field" && badField["id"] == 10)
        #expect(await harness.order(id) == current)

        await setup.stop()
    }

    /// The owner of an account partition runs the account operations routed to it for the user
    /// the request names: an edit of the profile, the runner's verification sent and read,
    /// feedback; it answers, byte for byte, what the same operation gives a connection of its own.
    /// An operation of the other space, sent to either partition, is refused and changes nothing.
    @Test func theAccountPartitionsOwnerRunsRoutedAccountOperations() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let user = try await setup.harness.logIn("13800138005")
        let actor = RoutedActor(user: user, isApprovedRunner: false)

        let edited = try await setup.routeToAccounts(RoutedRequest(id: 1, operation: "profile.update",
                                                                   data: ["nickname": "Xiao Li", "dorm": "Dorm 7"], actor: actor))
        #expect(edited["id"] == 1 && edited["ok"] == .bool(true), "\(edited)")
        guard case .object(let data)? = edited["data"], case .object(let profile)? = data["user"] else {
            Issue.record("no profile in \(edited)")
            return
        }
        #expect(profile["nickname"] == "Xiao Li" && profile["dorm"] == "Dorm 7")
        let read = try await setup.client.request(setup.accounts, payload: RoutedRequest(
            id: 2, operation: "profile.get", data: nil, actor: actor).encoded()).get()
        let local = await withCheckedContinuation { continuation in
            RoutedOperations.run(RoutedRequest(id: 2, operation: "profile.get", data: nil, actor: actor).encoded(),
                                 serving: setup.accounts, of: PartitionMap(partitionCount: 1), app: setup.harness.app) {
                continuation.resume(returning: $0)
            }
        }
        #expect(read == local)
        #expect(try Self.reply(read)["data"] == edited["data"])

        let submitted = try await setup.routeToAccounts(RoutedRequest(id: 3, operation: "runner.submit_verification", data: [
            "real_name": "Li Lei", "student_id": "2023123456", "school": "North Campus University"], actor: actor))
        #expect(submitted["ok"] == .bool(true), "\(submitted)")
        let verification = try await setup.routeToAccounts(RoutedRequest(id: 4, operation: "runner.verification", data: nil, actor: actor))
        guard case .object(let data)? = verification["data"], case .object(let state)? = data["verification"] else {
            Issue.record("no verification in \(verification)")
            return
        }
        #expect(state["status"] == "pending", "\(verification)")
        let feedback = try await setup.routeToAccounts(RoutedRequest(id: 5, operation: "feedback.submit",
                                                                     data: ["text": "The parcel board is great"], actor: actor))
        #expect(feedback["ok"] == .bool(true), "\(feedback)")
        #expect(await setup.harness.accountState().feedback.count == 1)

        // Each partition runs only what it decides.
        let before = await setup.harness.accountState()
        let orderToAccounts = try await setup.routeToAccounts(RoutedRequest(id: 6, operation: "order.publish",
                                                                            data: Self.draft(now: setup.harness.clock.now), actor: actor))
        #expect(Self.errorCode(orderToAccounts) == "unknown_operation" && orderToAccounts["id"] == 6)
        let profileToBoards = try Self.reply(try await setup.route(RoutedRequest(id: 7, operation: "profile.update",
                                                                                 data: ["nickname": "Someone Else"], actor: actor)))
        #expect(Self.errorCode(profileToBoards) == "unknown_operation" && profileToBoards["id"] == 7)
        let watching = try await setup.routeToAccounts(RoutedRequest(id: 8, operation: "board.subscribe",
                                                                      data: ["types": ["bounty"]], actor: actor))
        #expect(Self.errorCode(watching) == "unknown_operation")
        let resume = try await setup.routeToAccounts(RoutedRequest(id: 9, operation: "auth.resume", data: ["token": "t"], actor: actor))
        #expect(Self.errorCode(resume) == "unauthenticated", "a token that is none")
        #expect(await setup.harness.accountState() == before)
        await setup.stop()
    }

    /// The ids a partition hands out name it: a board partition's order serials and an account
    /// partition's user ids are read back to that partition by the map every node routes with.
    @Test func theIdsAPartitionHandsOutNameIt() {
        let map = PartitionMap(partitionCount: 64)
        for index in 0..<64 {
            let space = IDSpace(partitions: 64, partition: index)
            var id: UInt64 = 0
            for _ in 0..<20 {
                id = space.firstID(atLeast: id + 1)
                #expect(map.partition(ofOrderSerial: id) == PartitionID(space: .boards, index: index))
                #expect(map.partition(ofUser: id) == PartitionID(space: .accounts, index: index))
            }
        }
    }

    /// A node reads the partition a request goes to from the request alone: a publish's campus,
    /// an order id's serial, the account concerned; an owner sent an order of another partition
    /// says so and runs nothing, and one of its own runs as usual.
    @Test func theDecidingPartitionIsReadFromTheRequest() async throws {
        let map = PartitionMap(partitionCount: 64)
        let actor = RoutedActor(user: UserID(130), isApprovedRunner: true)
        func partition(_ operation: String, _ data: JSONValue?) -> PartitionID? {
            RoutedOperations.partition(of: RoutedRequest(id: 1, operation: operation, data: data, actor: actor), in: map)
        }
        let order = OrderID(shard: 3, serial: 64 * 5 + 17)
        #expect(partition("order.publish", ["campus": "North", "type": "bounty"]) == map.partition(ofCampus: "North"))
        #expect(partition("order.accept", ["order_id": .integer(Int64(order.rawValue))]) == PartitionID(space: .boards, index: 17))
        #expect(partition("order.rate", ["order_id": .integer(Int64(order.rawValue)), "stars": 5]) == PartitionID(space: .boards, index: 17))
        #expect(partition("profile.update", ["nickname": "x"]) == PartitionID(space: .accounts, index: 2))
        #expect(partition("profile.get", ["user_id": 67]) == PartitionID(space: .accounts, index: 3))
        #expect(partition("order.get", [:]) == nil && partition("order.get", ["order_id": "7"]) == nil)
        #expect(partition("order.publish", nil) == nil && partition("board.subscribe", ["types": ["bounty"]]) == nil)
        // A phone's move: claimed and released where the phone is, taken and logged in where the user is.
        let phone = "+8613900139000"
        let ofPhone = map.partition(ofPhone: phone)
        #expect(ofPhone != PartitionID(space: .accounts, index: 2), "the test needs a phone of another partition than the actor's")
        #expect(partition(PhoneMoveQuery.claim, ["phone": .string(phone), "code": "123456"]) == ofPhone)
        #expect(partition(PhoneMoveQuery.release, ["phone": "139 0013 9000", "user": 130, "stamped_by": 1]) == ofPhone)
        #expect(partition(PhoneMoveQuery.take, ["phone": .string(phone), "claimed_at": 1]) == PartitionID(space: .accounts, index: 2))
        #expect(partition(PhoneMoveQuery.login, ["phone": .string(phone), "user": 67]) == PartitionID(space: .accounts, index: 3))
        #expect(partition(PhoneMoveQuery.claim, ["phone": "not a phone"]) == nil && partition(PhoneMoveQuery.login, ["phone": .string(phone)]) == nil)

        let harness = try ApplicationHarness()
        let small = PartitionMap(partitionCount: 4)
        func run(_ request: RoutedRequest, serving partition: PartitionID) async throws -> [String: JSONValue] {
            try Self.reply(await withCheckedContinuation { continuation in
                RoutedOperations.run(request.encoded(), serving: partition, of: small, app: harness.app) { continuation.resume(returning: $0) }
            })
        }
        let p1 = PartitionID(space: .boards, index: 1)
        let elsewhere = try await run(RoutedRequest(id: "x", operation: "order.cancel", data: [
            "order_id": .integer(Int64(OrderID(shard: 0, serial: 6).rawValue))], actor: actor), serving: p1)
        #expect(Self.errorCode(elsewhere) == "bad_request" && elsewhere["id"] == "x", "\(elsewhere)")
        let ours = try await run(RoutedRequest(id: "y", operation: "order.get", data: [
            "order_id": .integer(Int64(OrderID(shard: 0, serial: 5).rawValue))], actor: actor), serving: p1)
        #expect(Self.errorCode(ours) == "not_found" && ours["id"] == "y", "\(ours)")
        let unnamed = try await run(RoutedRequest(id: "z", operation: "order.get", data: [:], actor: actor), serving: p1)
        #expect(Self.errorCode(unnamed) == "invalid_field", "the operation's own refusal: \(unnamed)")
    }

    /// What a session on a node that owns nothing routes besides orders and accounts: the reads of
    /// every board at once, answered whole by the one board partition's owner and refused by a
    /// partition holding a part, and administration, run with the actor as the administrator.
    @Test func wholeBoardReadsAndAdministrationRunOnTheOwnerForAnotherNodesConnection() async throws {
        let harness = try ApplicationHarness()
        func run(_ operation: String, _ data: JSONValue?, actor: RoutedActor?, partition: PartitionID,
                 map: PartitionMap = PartitionMap(partitionCount: 1)) async throws -> [String: JSONValue] {
            try Self.reply(await withCheckedContinuation { continuation in
                RoutedOperations.run(RoutedRequest(id: 3, operation: operation, data: data, actor: actor).encoded(),
                                     serving: partition, of: map, app: harness.app) { continuation.resume(returning: $0) }
            })
        }
        let p0 = PartitionID(space: .boards, index: 0), a0 = PartitionID(space: .accounts, index: 0)
        let publisher = RoutedActor(user: try await harness.logIn("13800138031"), isApprovedRunner: false)
        let published = try await run("order.publish", Self.draft(now: harness.clock.now), actor: publisher, partition: p0)
        let id = try Self.orderID(in: published, publisher: publisher.user)

        func ids(_ reply: [String: JSONValue], _ key: String) -> [JSONValue] {
            guard case .object(let data)? = reply["data"], case .array(let items)? = data[key] else { return [] }
            return items.compactMap { if case .object(let order) = $0 { order["id"] } else { nil } }
        }
        let listed = try await run("board.list", ["types": ["express"]], actor: publisher, partition: p0)
        #expect(ids(listed, "orders") == [.integer(id)], "\(listed)")
        let mine = try await run("orders.mine", [:], actor: publisher, partition: p0)
        #expect(ids(mine, "orders") == [.integer(id)], "\(mine)")
        let earnings = try await run("runner.earnings", nil, actor: publisher, partition: p0)
        #expect(earnings["ok"] == .bool(true), "\(earnings)")
        let stats = try await run("board.stats", nil, actor: publisher, partition: p0)
        guard case .object(let statsData)? = stats["data"], case .object(let types)? = statsData["types"],
              case .object(let express)? = types["express"] else { throw ClusterError("no stats in \(stats)") }
        #expect(express["open"] == .integer(1))
        // A partition of several holds a part: it refuses rather than answer for all.
        let part = try await run("board.list", ["types": ["express"]], actor: publisher, partition: p0, map: PartitionMap(partitionCount: 4))
        #expect(Self.errorCode(part) == "bad_request", "\(part)")
        // Not a board operation on an account partition, nor the reverse.
        #expect(Self.errorCode(try await run("board.list", [:], actor: publisher, partition: a0)) == "unknown_operation")

        // Administration on the account owner: the actor is the administrator, decided there.
        let applicant = RoutedActor(user: try await harness.logIn("13800138032"), isApprovedRunner: false)
        let submitted = try await run("runner.submit_verification", ["real_name": "Li Lei", "student_id": "S-32", "school": "North"],
                                      actor: applicant, partition: a0)
        #expect(submitted["ok"] == .bool(true), "\(submitted)")
        let decision: JSONValue = ["user_id": .integer(Int64(applicant.user.rawValue)), "decision": "approve"]
        let refused = try await run("admin.decide_verification", decision, actor: publisher, partition: a0)
        #expect(Self.errorCode(refused) == "forbidden", "\(refused)")
        let admin = RoutedActor(user: try await harness.logIn(ApplicationHarness.adminPhone), isApprovedRunner: false)
        let pending = try await run("admin.pending_verifications", nil, actor: admin, partition: a0)
        #expect(ids(pending, "users") == [.integer(Int64(applicant.user.rawValue))], "\(pending)")
        let approved = try await run("admin.decide_verification", decision, actor: admin, partition: a0)
        #expect(approved["ok"] == .bool(true), "\(approved)")
        // The publisher notes the decision once it is durable, after or before the reply leaves.
        try await harness.eventually("the applicant is an approved runner") { harness.app.isApprovedRunner(applicant.user) }
        #expect(harness.logged("admin_action").contains { $0.contains("connection.id=routed") })
    }

    /// `operation` run by the owner of `a0` in `harness` (a map of one partition) for another
    /// node's connection, its reply read.
    static func runOnAccountOwner(_ operation: String, _ data: JSONValue?, actor: RoutedActor?,
                                  of harness: ApplicationHarness) async throws -> [String: JSONValue] {
        try reply(await withCheckedContinuation { continuation in
            RoutedOperations.run(RoutedRequest(id: 4, operation: operation, data: data, actor: actor).encoded(),
                                 serving: PartitionID(space: .accounts, index: 0), of: PartitionMap(partitionCount: 1),
                                 app: harness.app) { continuation.resume(returning: $0) }
        })
    }

    /// The server operator logged in on a node with that node's admin secret: the owner runs their
    /// commands as the built-in administrator's, as for a connection of its own with its secret.
    @Test func theBuiltInAdministratorOfANodeAdministersOnTheOwner() async throws {
        let harness = try ApplicationHarness()
        func run(_ operation: String, _ data: JSONValue?, actor: RoutedActor?) async throws -> [String: JSONValue] {
            try await Self.runOnAccountOwner(operation, data, actor: actor, of: harness)
        }
        let applicant = RoutedActor(user: try await harness.logIn("13800138041"), isApprovedRunner: false)
        let submitted = try await run("runner.submit_verification", ["real_name": "Li Lei", "student_id": "S-41", "school": "North"],
                                      actor: applicant)
        #expect(submitted["ok"] == .bool(true), "\(submitted)")
        let pending = try await run("admin.pending_verifications", nil, actor: .builtInAdministrator)
        guard case .object(let data)? = pending["data"], case .array(let users)? = data["users"] else { throw ClusterError("\(pending)") }
        #expect(users.map { $0["id"] } == [.integer(Int64(applicant.user.rawValue))], "\(pending)")
        let rejected = try await run("admin.decide_verification", ["user_id": .integer(Int64(applicant.user.rawValue)), "decision": "reject",
                                                                   "reason": "the photo is unreadable"], actor: .builtInAdministrator)
        #expect(rejected["data"]?["user"]?["verification"]?["status"] == "rejected", "\(rejected)")
        #expect(harness.logged("admin_action").contains { $0.contains("administrator=0") && $0.contains("connection.id=routed") })
        let stats = try await run("admin.stats", nil, actor: .builtInAdministrator)
        #expect(stats["ok"] == .bool(true), "\(stats)")
        // The same user 0 without the vouching is nobody: decoding refuses it (see above).
    }

    /// An account partition's part of the cluster's feedback: its newest after a cursor of
    /// (time, cluster id), and the time of one of its entries, for an administrator vouched for.
    @Test func theOwnerAnswersItsPartOfTheFeedbackAfterACursor() async throws {
        let harness = try ApplicationHarness()
        func run(_ operation: String, _ data: JSONValue?, actor: RoutedActor?) async throws -> [String: JSONValue] {
            try await Self.runOnAccountOwner(operation, data, actor: actor, of: harness)
        }
        let writer = RoutedActor(user: try await harness.logIn("13800138051"), isApprovedRunner: false)
        for text in ["first", "second", "third"] {
            #expect(try await run("feedback.submit", ["text": .string(text)], actor: writer)["ok"] == .bool(true))
            harness.clock.advance(milliseconds: 1_000)
        }
        let vouched = RoutedActor(user: writer.user, isApprovedRunner: false, isVouchedAdministrator: true)
        func texts(_ reply: [String: JSONValue]) -> [String] {
            guard case .array(let entries)? = reply["data"]?["feedback"] else { return [] }
            return entries.compactMap { if case .string(let text)? = $0["text"] { text } else { nil } }
        }
        let newest = try await run("node.feedback_page", ["limit": 2], actor: vouched)
        #expect(texts(newest) == ["third", "second"], "\(newest)")
        let at = try await run("node.feedback_at", ["id": 2], actor: vouched)
        guard case .integer(let time)? = at["data"]?["submitted_at"] else { throw ClusterError("\(at)") }
        let after = try await run("node.feedback_page", ["limit": 5, "before": 2, "before_at": .integer(time)], actor: vouched)
        #expect(texts(after) == ["first"], "\(after)")
        #expect(Self.errorCode(try await run("node.feedback_at", ["id": 9], actor: vouched)) == "invalid_field")
        #expect(Self.errorCode(try await run("node.feedback_page", ["limit": 2, "before": 2], actor: vouched)) == "invalid_field")
        #expect(Self.errorCode(try await run("node.feedback_page", ["limit": 2], actor: writer)) == "forbidden", "not vouched for")
        #expect(texts(try await run("node.feedback_page", ["limit": 1], actor: .builtInAdministrator)) == ["third"])
    }

    /// A code is requested through the owner of the phone's partition, for a connection logged
    /// in or not, and the limit per address counts the address the node holding the connection
    /// sent; what needs a login is refused without an actor.
    @Test func aCodeIsRequestedInThePhonesPartitionCountedByTheClientsAddress() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        func request(_ phone: String, from address: String?, actor: RoutedActor? = nil,
                     purpose: String? = nil) async throws -> [String: JSONValue] {
            var data: [String: JSONValue] = ["phone": .string(phone)]
            if let purpose { data["purpose"] = .string(purpose) }
            return try await setup.routeToAccounts(RoutedRequest(id: .string(phone), operation: "auth.request_code",
                                                                 data: .object(data), actor: actor, clientAddress: address))
        }
        let first = try await request("13800138101", from: "10.1.2.3")
        guard case .object(let issued)? = first["data"], case .string(let code)? = issued["dev_code"] else {
            Issue.record("no code issued: \(first)")
            return
        }
        #expect(issued["phone"] == "+8613800138101" && code.count == 6 && first["id"] == "13800138101")
        // 20 codes an hour per address (the server's default), counted by the address sent.
        for number in 102...120 { #expect(try await request("13800138\(number)", from: "10.1.2.3")["ok"] == .bool(true)) }
        let refused = try await request("13800138121", from: "10.1.2.3")
        #expect(Self.errorCode(refused) == "rate_limited", "\(refused)")
        #expect(try await request("13800138121", from: "10.9.9.9")["ok"] == .bool(true))

        // A phone change needs a login; so does every order operation.
        let change = try await request("13800138122", from: "10.9.9.9", purpose: "change_phone")
        #expect(Self.errorCode(change) == "unauthenticated", "\(change)")
        let user = try await setup.harness.logIn("13800138123")
        let changing = try await request("13800138124", from: "10.9.9.9", actor: RoutedActor(user: user, isApprovedRunner: false),
                                         purpose: "change_phone")
        #expect(changing["ok"] == .bool(true), "\(changing)")
        let anonymousOrder = try Self.reply(try await setup.route(RoutedRequest(id: 9, operation: "order.get",
                                                                                data: ["order_id": 5], actor: nil)))
        #expect(Self.errorCode(anonymousOrder) == "unauthenticated" && anonymousOrder["id"] == 9, "\(anonymousOrder)")

        // With many account partitions, the phone's.
        let map = PartitionMap(partitionCount: 64)
        let byPhone = RoutedRequest(id: 1, operation: "auth.request_code", data: ["phone": "13800138101"], actor: nil)
        #expect(RoutedOperations.partition(of: byPhone, in: map) == map.partition(ofPhone: "+8613800138101"))
        let unreadable = RoutedRequest(id: 1, operation: "auth.request_code", data: ["phone": "call me"], actor: nil)
        #expect(RoutedOperations.partition(of: unreadable, in: map) == nil)
        await setup.stop()
    }

    /// A login by code or password and a resume, each for a connection another node holds: the
    /// owner of the account partition opens or checks the session as for a connection of its own
    /// and answers where the user's stream stands, from which that node follows it.
    @Test func aLoginAndAResumeRunOnTheAccountOwnerForAnotherNodesConnection() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let harness = setup.harness
        func run(_ operation: String, _ data: JSONValue, actor: RoutedActor? = nil) async throws -> [String: JSONValue] {
            try await setup.routeToAccounts(RoutedRequest(id: 7, operation: operation, data: data, actor: actor,
                                                          clientAddress: "10.2.3.4"))
        }
        func data(_ reply: [String: JSONValue]) -> [String: JSONValue] {
            guard case .object(let members)? = reply["data"] else { return [:] }
            return members
        }
        func code(_ phone: String) async throws -> JSONValue {
            data(try await run("auth.request_code", ["phone": .string(phone)]))["dev_code"] ?? .null
        }
        let phone = "13800138501"
        let first = try await run("auth.login_code", ["phone": .string(phone), "code": try await code(phone), "device": "phone"])
        #expect(first["ok"] == .bool(true) && first["id"] == 7, "\(first)")
        guard case .string(let token)? = data(first)["token"], case .object(let view)? = data(first)["user"],
              case .integer(let id)? = view["id"] else {
            Issue.record("no session in \(first)")
            return
        }
        let user = UserID(UInt64(id))
        #expect(data(first)["is_new"] == .bool(true) && SessionToken.claimedUser(of: token) == user)
        let streams = harness.app.publisher.accounts.streams
        func last() -> UInt64 { streams.kept(for: user, after: 0, now: harness.clock.now).last }
        #expect(data(first)["seq"] == .integer(Int64(last())), "the stream's number when the login was answered")
        let wrong = try await run("auth.login_code", ["phone": .string(phone), "code": "000000"])
        #expect(Self.errorCode(wrong) != nil && wrong["ok"] == .bool(false), "\(wrong)")

        // A second device, once the phone may have another code: its login is numbered in the
        // stream before it is answered.
        harness.clock.advance(milliseconds: 120_000)
        let before = last()
        let second = try await run("auth.login_code", ["phone": .string(phone), "code": try await code(phone)])
        #expect(data(second)["is_new"] == .bool(false) && data(second)["seq"] == .integer(Int64(last())), "\(second)")
        #expect(last() == before + 1, "the first device is told of the second login")
        for _ in 0..<2 { _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user) }
        try await harness.eventually("both publishes numbered") { last() == before + 3 }
        let resumed = try await run("auth.resume", ["token": .string(token), "last_seq": .integer(Int64(before))])
        #expect(data(resumed)["seq"] == .integer(Int64(last())) && data(resumed)["resync"] == .bool(false), "\(resumed)")
        #expect(data(resumed)["user"] == .object(view))
        let ahead = try await run("auth.resume", ["token": .string(token), "last_seq": .integer(Int64(last() + 5))])
        #expect(data(ahead)["resync"] == .bool(true), "a device ahead of the stream starts again")
        let forged = try await run("auth.resume", ["token": .string(String(token.dropLast(2)) + "AA")])
        #expect(Self.errorCode(forged) == "unauthenticated", "\(forged)")

        // A password, set through the owner, logs in there too.
        let set = try await run("auth.set_password", ["password": "correct horse 42"], actor: RoutedActor(user: user, isApprovedRunner: false))
        #expect(set["ok"] == .bool(true), "\(set)")
        let byPassword = try await run("auth.login_password", ["phone": .string(phone), "password": "correct horse 42"])
        #expect(data(byPassword)["is_new"] == .bool(false) && data(byPassword)["seq"] == .integer(Int64(last())), "\(byPassword)")

        // Each goes to the partition that decides it: the phone's, or the token's user's.
        let map = PartitionMap(partitionCount: 16)
        for operation in ["auth.login_code", "auth.login_password"] {
            let request = RoutedRequest(id: 1, operation: operation, data: ["phone": .string(phone)], actor: nil)
            #expect(RoutedOperations.partition(of: request, in: map) == map.partition(ofPhone: "+86" + phone))
        }
        let resume = RoutedRequest(id: 1, operation: "auth.resume", data: ["token": .string(token)], actor: nil)
        #expect(RoutedOperations.partition(of: resume, in: map) == map.partition(ofUser: user.rawValue))
        #expect(RoutedOperations.partition(of: RoutedRequest(id: 1, operation: "auth.resume", data: ["token": "nope"], actor: nil),
                                           in: map) == nil)
        #expect(Self.errorCode(try await setup.routeToAccounts(RoutedRequest(id: 8, operation: "board.subscribe",
                                                                              data: ["types": ["bounty"]], actor: nil)))
                == "unknown_operation", "watching the boards needs the connection")

        // The list of sessions and logging out, for the session the node sends with the actor.
        let anyone = RoutedActor(user: user, isApprovedRunner: false)
        func sessions(_ actor: RoutedActor) async throws -> [[String: JSONValue]] {
            guard case .array(let list)? = data(try await run("auth.sessions", [:], actor: actor))["sessions"] else { return [] }
            return list.compactMap { if case .object(let session) = $0 { session } else { nil } }
        }
        let devices = try await sessions(anyone)
        #expect(devices.count == 3 && devices.allSatisfy { $0["is_current"] == JSONValue.bool(false) }, "\(devices)")
        let ids = try devices.map { session -> SessionID in
            guard case .string(let text)? = session["id"] else { throw ClusterError("no id in \(session)") }
            return try SessionWire.decodeID(text)
        }
        let firstDevice = RoutedActor(user: user, isApprovedRunner: false, session: ids[0])
        #expect(try await sessions(firstDevice).filter { $0["is_current"] == JSONValue.bool(true) }.count == 1)
        let beforeLogout = last()
        let loggedOut = try await run("auth.logout", [:], actor: firstDevice)
        #expect(loggedOut["ok"] == .bool(true), "\(loggedOut)")
        try await harness.eventually("the other devices told") { last() == beforeLogout + 1 }
        let stale = try await run("auth.sessions", [:], actor: firstDevice)
        #expect(Self.errorCode(stale) == "unauthenticated", "a session logged out")
        let revoked = try await run("auth.revoke_session", ["session_id": .string(ids[1].description)], actor: anyone)
        let remaining = try await sessions(anyone)
        #expect(revoked["ok"] == .bool(true) && remaining.count == 1, "\(revoked)")
        let sessionless = try await run("auth.logout", [:], actor: anyone)
        #expect(Self.errorCode(sessionless) == "unauthenticated", "no session to log out")
        await setup.stop()
    }

    @Test func anActorsSessionIsReadWholeOrRefused() throws {
        let session = SessionID(high: 0x0102, low: 0xA0B0)
        let request = RoutedRequest(id: 1, operation: "auth.logout", data: nil,
                                    actor: RoutedActor(user: UserID(9), isApprovedRunner: true, session: session))
        let read = try RoutedRequest.decode(request.encoded()).get()
        #expect(read.actor == request.actor && read.actor?.session == session)
        for actor in [#"{"runner": true, "session": "0102", "user": 9}"#, #"{"runner": true, "session": 5, "user": 9}"#,
                      #"{"runner": true, "user": 9, "extra": 1}"#] {
            let text = #"{"actor": "# + actor + #", "id": 2, "op": "auth.logout"}"#
            guard case .failure(let failure) = RoutedRequest.decode(Array(text.utf8)) else {
                Issue.record("read \(actor)")
                continue
            }
            #expect(failure.error.code == .badRequest && failure.error.field == "actor" && failure.id == 2)
        }
    }

    /// A node following a user's personal stream asks the owner of the user's account partition
    /// for the events after a number: it answers them as the user's devices were sent them, with
    /// their numbers and the stream's last, and a follower catches up from the answer in order.
    /// A malformed question is refused; no client can ask it.
    @Test func theOwnerAnswersANodeFollowingAPersonalStream() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let harness = setup.harness
        let user = try await harness.logIn("13800138201")
        for _ in 0..<3 { _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user) }
        let streams = harness.app.publisher.accounts.streams
        try await harness.eventually("the publishes numbered in the user's stream") {
            streams.kept(for: user, after: 0, now: harness.clock.now).last >= 3
        }
        let kept = streams.kept(for: user, after: 0, now: harness.clock.now)
        func ask(_ data: JSONValue) async throws -> [UInt8] {
            try await setup.client.request(setup.accounts, payload: RoutedRequest(
                id: 1, operation: "node.stream_after", data: data, actor: nil).encoded()).get()
        }
        let userID = JSONValue.integer(Int64(user.rawValue))
        let answer = try #require(PersonalStreamAnswer.decode(try await ask(["user": userID, "after": 0])))
        #expect(answer.last == kept.last && answer.events.map(\.number) == Array(1...kept.last))
        #expect(answer.events.map(\.message) == kept.events.map(\.message))
        var follower = PersonalStreamFollower<[UInt8]>(after: 0)
        let outcome = follower.replayed(after: 0, events: answer.events.map { ($0.number, $0.message) }, through: answer.last)
        #expect(outcome.events == kept.events.map(\.message) && !outcome.lost && follower.head == kept.last)
        let tail = try #require(PersonalStreamAnswer.decode(try await ask(["user": userID, "after": .integer(Int64(kept.last - 1))])))
        #expect(tail.last == kept.last && tail.events.map(\.number) == [kept.last])
        let nobody = try #require(PersonalStreamAnswer.decode(try await ask(["user": 999_999, "after": 0])))
        #expect(nobody.last == 0 && nobody.events.isEmpty)

        let malformed = try Self.reply(try await ask(["user": 0, "after": 1]))
        #expect(Self.errorCode(malformed) == "bad_request", "\(malformed)")
        let onBoards = try Self.reply(try await setup.route(RoutedRequest(id: 3, operation: "node.stream_after",
                                                                          data: ["user": userID, "after": 0], actor: nil)))
        #expect(Self.errorCode(onBoards) == "unknown_operation")
        #expect(OperationTable.shared.operations["node.stream_after"] == nil, "not a client operation")
        // With four account partitions, only the owner of the user's answers.
        let map = PartitionMap(partitionCount: 4)
        let home = map.partition(ofUser: user.rawValue)
        for index in 0..<4 {
            let partition = PartitionID(space: .accounts, index: index)
            let bytes = await withCheckedContinuation { continuation in
                RoutedOperations.run(RoutedRequest(id: 4, operation: "node.stream_after", data: ["user": userID, "after": 0],
                                                   actor: nil).encoded(), serving: partition, of: map, app: harness.app) {
                    continuation.resume(returning: $0)
                }
            }
            if partition == home {
                #expect(PersonalStreamAnswer.decode(bytes)?.last == kept.last)
            } else {
                #expect(try Self.errorCode(Self.reply(bytes)) == "bad_request", "\(partition)")
            }
        }
        await setup.stop()
    }

    @Test func theOwnerAnswersANodesQuestionForItsPartOfABoardListing() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let harness = setup.harness
        let user = try await harness.logIn("13800138211")
        var tips: [Cents] = []
        for tip in [300, 800, 150, 800, 500] as [Cents] {
            var draft = Drafts.bounty(now: harness.clock.now)
            draft.tip = tip
            draft.campus = tip == 150 ? "north" : "south"
            _ = try await harness.publish(draft, by: user)
            tips.append(tip)
        }
        _ = try await harness.publish(Drafts.express(now: harness.clock.now), by: user)
        func ask(_ data: JSONValue) async throws -> [UInt8] {
            try await setup.route(RoutedRequest(id: 5, operation: "node.board_list", data: data, actor: nil))
        }
        func tip(_ entry: BoardListAnswer.Entry) throws -> Int64? {
            guard case .object(let order) = try JSONParser.parse(entry.order), case .integer(let tip)? = order["tip"] else { return nil }
            return tip
        }
        let top = try #require(BoardListAnswer.decode(try await ask(["types": ["bounty"], "sort": "tip", "limit": 3])[...]))
        #expect(top.sequences == ["bounty": harness.app.boardSequence(of: .bounty)] && top.sequences["bounty"] == 5)
        #expect(top.total == 5 && top.hasMore && top.entries.count == 3)
        #expect(try top.entries.map(tip) == [800, 800, 500], "the listing's order: highest tip first")
        #expect(top.entries.map(\.key) == [800, 800, 500] && top.entries[0].id > top.entries[1].id, "ties by id, the same way")
        // Paged by cursor, as a node walks a part for `board.list`: the total still counts every match.
        let after = ListCursor(key: top.entries[1].key, id: OrderID(rawValue: top.entries[1].id)).token
        let next = try #require(BoardListAnswer.decode(try await ask(["types": ["bounty"], "sort": "tip", "limit": 2,
                                                                      "cursor": .string(after)])[...]))
        #expect(try next.entries.map(tip) == [500, 300] && next.total == 5 && next.hasMore, "\(next)")
        let badCursor = try Self.reply(try await ask(["types": ["bounty"], "cursor": "sideways"]))
        #expect(Self.errorCode(badCursor) == "invalid_field", "\(badCursor)")
        let south = try #require(BoardListAnswer.decode(try await ask(["types": ["bounty"], "campus": "south"])[...]))
        #expect(south.total == 4 && !south.hasMore && south.entries.count == 4)
        let every = try #require(BoardListAnswer.decode(try await ask(["types": ["bounty", "express"]])[...]))
        #expect(every.sequences == ["bounty": 5, "express": 1] && every.total == 6)

        // Refused as `board.subscribe` refuses it, on a board partition only, never a client's.
        let untyped = try Self.reply(try await ask(["campus": "south"]))
        #expect(Self.errorCode(untyped) == "invalid_field", "\(untyped)")
        let unknown = try Self.reply(try await ask(["types": ["bounty"], "colour": "red"]))
        #expect(Self.errorCode(unknown) != nil, "\(unknown)")
        let counts = try Self.reply(try await setup.route(RoutedRequest(id: 9, operation: "node.board_counts", data: nil, actor: nil)))
        #expect(counts["data"] == ["open": ["bounty": 5, "express": 1, "group": 0, "purchase": 0],
                                   "runners_online": ["bounty": 0, "express": 0, "group": 0, "purchase": 0]], "\(counts)")
        // The runners the owner counts include what other nodes report watching.
        harness.app.runnersElsewhere.heard(WatchingReport(node: "n2", watching: [.bounty: [user], .group: [user]]), at: EventLoop.now)
        let withRunners = try Self.reply(try await setup.route(RoutedRequest(id: 11, operation: "node.board_counts", data: nil, actor: nil)))
        #expect(withRunners["data"] == ["open": ["bounty": 5, "express": 1, "group": 0, "purchase": 0],
                                        "runners_online": ["bounty": 1, "express": 0, "group": 1, "purchase": 0]], "\(withRunners)")
        let countsWithData = try Self.reply(try await setup.route(RoutedRequest(id: 10, operation: "node.board_counts",
                                                                               data: ["types": ["bounty"]], actor: nil)))
        #expect(Self.errorCode(countsWithData) == "bad_request")
        let onAccounts = try await setup.routeToAccounts(RoutedRequest(id: 6, operation: "node.board_list",
                                                                       data: ["types": ["bounty"]], actor: nil))
        #expect(Self.errorCode(onAccounts) == "unknown_operation")
        #expect(OperationTable.shared.operations["node.board_list"] == nil, "not a client operation")
        await setup.stop()
    }

    /// A node's questions about a user (their orders on the shards, their takings, whether they
    /// administer) refuse a question about nobody, and data they do not take, by name.
    @Test func aNodesQuestionAboutAUserNamesTheUser() async throws {
        let harness = try ApplicationHarness()
        let map = PartitionMap(partitionCount: 2)
        func ask(_ operation: String, _ data: JSONValue?, actor: RoutedActor?, in space: PartitionSpace) async throws -> [String: JSONValue] {
            try Self.reply(await withCheckedContinuation { continuation in
                RoutedOperations.run(RoutedRequest(id: 8, operation: operation, data: data, actor: actor).encoded(),
                                     serving: PartitionID(space: space, index: actor.map { Int($0.user.rawValue % 2) } ?? 0), of: map,
                                     app: harness.app) { continuation.resume(returning: $0) }
            })
        }
        let user = RoutedActor(user: try await harness.logIn("13800138601"), isApprovedRunner: false)
        for (operation, space) in [("node.live_orders", PartitionSpace.boards), ("node.live_earnings", .boards),
                                   ("node.is_administrator", .accounts)] {
            let nobody = try await ask(operation, nil, actor: nil, in: space)
            #expect(Self.errorCode(nobody) == "unauthenticated" && nobody["id"] == 8, "\(operation): \(nobody)")
        }
        #expect(Self.errorCode(try await ask("node.live_orders", ["role": "boss"], actor: user, in: .boards)) == "invalid_field")
        #expect(Self.errorCode(try await ask("node.live_earnings", ["x": 1], actor: user, in: .boards)) == "bad_request")
        let administers = try await ask("node.is_administrator", nil, actor: user, in: .accounts)
        #expect(administers["data"] == ["administrator": false], "\(administers)")
        #expect(Self.errorCode(try await ask("node.live_orders", nil, actor: user, in: .accounts)) == "unknown_operation")
    }

    /// An account operation goes to the partition of the account it concerns (the actor's, or
    /// the one `profile.get` names); an owner sent one for an account of another partition says
    /// so and runs nothing.
    @Test func anAccountOfAnotherPartitionIsRefusedByName() async throws {
        let harness = try ApplicationHarness()
        let map = PartitionMap(partitionCount: 4)
        let user = try await harness.logIn("13800138006")
        let home = map.partition(ofUser: user.rawValue)
        let elsewhere = PartitionID(space: .accounts, index: (home.index + 1) % 4)
        let actor = RoutedActor(user: user, isApprovedRunner: false)
        let edit = RoutedRequest(id: "e", operation: "profile.update", data: ["nickname": "Xiao Li"], actor: actor)
        #expect(RoutedOperations.accountPartition(of: edit, in: map) == home)
        let other = UInt64(1_000_003)
        let look = RoutedRequest(id: "g", operation: "profile.get", data: ["user_id": .integer(Int64(other))], actor: actor)
        #expect(RoutedOperations.accountPartition(of: look, in: map) == map.partition(ofUser: other))

        func run(_ request: RoutedRequest, serving partition: PartitionID) async throws -> [String: JSONValue] {
            try Self.reply(await withCheckedContinuation { continuation in
                RoutedOperations.run(request.encoded(), serving: partition, of: map, app: harness.app) { continuation.resume(returning: $0) }
            })
        }
        let before = await harness.accountState()
        let refused = try await run(edit, serving: elsewhere)
        #expect(Self.errorCode(refused) == "bad_request" && refused["id"] == "e", "\(refused)")
        guard case .object(let error)? = refused["error"], case .string(let message)? = error["message"] else {
            Issue.record("no message in \(refused)")
            return
        }
        #expect(message.contains("\(home)") && message.contains("\(elsewhere)"), "\(message)")
        #expect(await harness.accountState() == before)
        #expect(try await run(edit, serving: home)["ok"] == .bool(true))
    }

    /// The requesting node passes the owner's answer on as it came; without an owner within the
    /// bound the client hears `storage_unavailable` for its request; a request sent and never
    /// answered closes the connection with 1012, since it may have been carried out.
    @Test func theRouterPassesTheAnswerOnOrSaysWhatTheClientGets() async throws {
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let router = NodeRouter(requests: setup.client)
        let publish = RoutedRequest(id: "p", operation: "order.publish", data: Self.draft(now: setup.harness.clock.now),
                                    actor: Self.publisher)
        guard case .reply(let bytes) = await router.route(publish, to: setup.partition) else {
            Issue.record("no reply")
            return
        }
        let rawID = try Self.orderID(in: Self.reply(bytes))
        #expect(await setup.harness.order(OrderID(rawValue: UInt64(rawID)))?.status == .open)
        // Or to the partition the request names, here the one of a deployment of one.
        let get = RoutedRequest(id: "g", operation: "order.get", data: ["order_id": .integer(rawID)], actor: Self.publisher)
        guard case .reply(let got) = await router.route(get, in: PartitionMap(partitionCount: 1)) else {
            Issue.record("no reply to a request routed by what it names")
            return
        }
        #expect(try Self.reply(got)["ok"] == .bool(true))

        var impatient = setup.client
        impatient.policy = RoutePolicy(boundMilliseconds: 300)
        let nobodysPartition = PartitionID(space: .boards, index: 1)
        guard case .reply(let refusal) = await NodeRouter(requests: impatient).route(publish, to: nobodysPartition) else {
            Issue.record("no reply without an owner")
            return
        }
        let refused = try Self.reply(refusal)
        #expect(Self.errorCode(refused) == "storage_unavailable" && refused["id"] == "p")
        #expect(NodeRouter.outcome(of: .failure(.outcomeUnknown(setup.partition)), for: "p")
                == .close(.serviceRestart, reason: "owner of p0 did not answer; resume to see what was done"))
        await setup.stop()
    }

    /// A measuring tool, not a test: `ROUTE_BENCHMARK=1000 swift test -c release --build-path
    /// .build-rel -Xswiftc -enable-testing --filter RoutedOperationsTests/measure`. Sends that many
    /// `order.get` (to `p0`), `profile.get` and `node.stream_after` (to `a0`) one after another to
    /// the owner through a nats-server, and as many run on the owner directly (the same operation,
    /// answered in process), and prints the medians and p99: their difference is what one hop to
    /// the owner costs a request.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["ROUTE_BENCHMARK"] != nil))
    func measureOneHopToTheOwner() async throws {
        let count = Int(ProcessInfo.processInfo.environment["ROUTE_BENCHMARK"] ?? "") ?? 500
        let setup = try await RoutedSetup.start()
        defer { setup.nats.stop() }
        let (harness, client, partition) = (setup.harness, setup.client, setup.partition)
        let rawID = try Self.orderID(in: Self.reply(try await setup.route(RoutedRequest(
            id: 1, operation: "order.publish", data: Self.draft(now: harness.clock.now), actor: Self.publisher))))
        let user = try await harness.logIn("13800138301")
        _ = try await harness.publish(Drafts.bounty(now: harness.clock.now), by: user)
        let actor = RoutedActor(user: user, isApprovedRunner: false)
        let app: Application = harness.app
        func microseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
        }
        func summary(_ values: [Double]) -> String {
            let sorted = values.sorted()
            return String(format: "median %.0f µs, p99 %.0f µs", sorted[sorted.count / 2], sorted[sorted.count * 99 / 100])
        }
        let clock = ContinuousClock()
        for (name, partition, request) in [
            ("order.get", partition, RoutedRequest(id: 2, operation: "order.get", data: ["order_id": .integer(rawID)], actor: Self.publisher)),
            ("profile.get", setup.accounts, RoutedRequest(id: 3, operation: "profile.get", data: nil, actor: actor)),
            ("node.stream_after", setup.accounts, RoutedRequest(id: 4, operation: "node.stream_after",
                                                                 data: ["user": .integer(Int64(user.rawValue)), "after": 0], actor: nil)),
        ] {
            let payload = request.encoded()
            var routed: [Double] = [], direct: [Double] = []
            for _ in 0..<count {
                var started = clock.now
                _ = try await client.request(partition, payload: payload).get()
                routed.append(microseconds(clock.now - started))
                started = clock.now
                _ = await withCheckedContinuation { continuation in
                    RoutedOperations.run(payload, serving: partition, of: PartitionMap(partitionCount: 1), app: app) {
                        continuation.resume(returning: $0)
                    }
                }
                direct.append(microseconds(clock.now - started))
            }
            print("\(name) x\(count): routed through NATS \(summary(routed)); on the owner directly \(summary(direct))")
            #expect(routed.count == count)
        }
        await setup.stop()
    }
}
