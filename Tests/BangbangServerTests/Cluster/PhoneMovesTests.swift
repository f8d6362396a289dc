// A phone moving across pairs, played by a node over a real nats-server (PhoneMoves.swift,
// PhoneMoveQuery.swift): two pairs' account partitions, each an application with the ids of its
// residue and its own clock, served over NATS as their owners serve them, and the node's
// `PhoneMoves` driving the change and the logins. A user of pair 1 moves to a phone of pair 0,
// logs in by it by code and by password on the node, and the number it left registers anew; a
// claim no account uses is never a login, and is released only once old enough; a claim too old
// to be sure of is not taken.
import BangbangCore
import BangbangProtocol
import Cluster
import Foundation
import JSON
import NATSClient
import NATSTestSupport
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite(.serialized, .sharedNATSCluster, .timeLimit(.minutes(2))) struct PhoneMovesTests {
    static let map = PartitionMap(partitionCount: 2)

    /// A mainland number, the `index`-th of those whose account partition is `pair`.
    static func phone(in pair: Int, _ index: Int) -> String {
        let numbers = (0...).lazy.map { String(format: "+86139%08d", 4_200_000 + $0) }
        return Array(numbers.filter { map.partition(ofPhone: $0).index == pair }.prefix(index + 1))[index]
    }

    final class TwoPairs: Sendable {
        let served: ServedOwners
        let moves: PhoneMoves
        let router: NodeRouter
        var owners: [ApplicationHarness] { served.owners }

        init() async throws {
            // Each pair's application as a node runs it: its accounts in their own stream, its
            // users' ids of its residue.
            served = try await ServedOwners(serving: (0..<2).map { PartitionID(space: .accounts, index: $0) }, of: PhoneMovesTests.map) {
                pair, connection in
                try ApplicationHarness(cluster: try await PartitionedStorageTests().storage(
                    JetStream(connection: connection), node: "owner-\(pair)", pair: pair, of: PhoneMovesTests.map))
            }
            router = NodeRouter(requests: PartitionRequests(connection: served.node))
            moves = PhoneMoves(router: router, map: PhoneMovesTests.map, logger: Logger(level: .error, sink: { _ in }))
        }

        func stop() async { await served.stop() }

        /// The reply to `operation` with `data`, as the node routes it for `actor`.
        func ask(_ operation: String, _ data: JSONValue, actor: UserID? = nil) async throws -> [String: JSONValue] {
            let request = RoutedRequest(id: "r", operation: operation, data: data,
                                        actor: actor.map { RoutedActor(user: $0, isApprovedRunner: false) }, clientAddress: "10.0.0.9")
            let outcome: NodeRouter.Outcome = await withCheckedContinuation { continuation in
                let done: @Sendable (NodeRouter.Outcome) -> Void = { continuation.resume(returning: $0) }
                switch operation {
                case ProfileOperations.changePhone.name: moves.changePhone(request, completion: done)
                case AuthOperations.loginWithCode.name, AuthOperations.loginWithPassword.name: moves.logIn(request, completion: done)
                default: router.route(request, in: PhoneMovesTests.map, completion: done)
                }
            }
            guard case .reply(let bytes) = outcome else { throw ClusterError("no reply: \(outcome)") }
            return try RoutedOperationsTests.reply(bytes)
        }

        /// The code sent to `phone` for `purpose`, asked for by `actor`.
        func code(_ phone: String, purpose: String = "login", actor: UserID? = nil) async throws -> String {
            let reply = try await ask("auth.request_code", ["phone": .string(phone), "purpose": .string(purpose)], actor: actor)
            guard case .object(let data)? = reply["data"], case .string(let code)? = data["dev_code"] else {
                throw ClusterError("no code: \(reply)")
            }
            return code
        }

        /// Logs in by `phone` with a fresh code; the reply's data.
        func logIn(_ phone: String) async throws -> [String: JSONValue] {
            let code = try await code(phone)
            return try await ask("auth.login_code", ["phone": .string(phone), "code": .string(code)])
        }

        /// Moves every owner's clock past the code spacing.
        func wait(seconds: Int64) {
            for owner in owners { owner.clock.advance(milliseconds: seconds * 1000) }
        }

        func claim(on phone: String, in pair: Int) async -> PhoneClaim? {
            let app = owners[pair].app!
            let number = PhoneNumber(rawValue: phone)
            return await withCheckedContinuation { continuation in
                app.accounts.perform { owner in continuation.resume(returning: owner.store.claim(on: number)) }
            }
        }
    }

    static func data(_ reply: [String: JSONValue]) -> [String: JSONValue] {
        guard reply["ok"] == .bool(true), case .object(let data)? = reply["data"] else { return [:] }
        return data
    }

    static func user(_ reply: [String: JSONValue]) -> JSONValue? {
        guard case .object(let user)? = data(reply)["user"] else { return nil }
        return user["id"]
    }

    static func error(_ reply: [String: JSONValue]) -> String? {
        guard case .object(let error)? = reply["error"], case .string(let code)? = error["code"] else { return nil }
        return code
    }

    @Test func aUserMovesToAPhoneOfAnotherPairAndLogsInByIt() async throws {
        let pairs = try await TwoPairs()
        defer { Task { await pairs.stop() } }
        let first = Self.phone(in: 1, 0), moved = Self.phone(in: 0, 0)
        let registered = try await pairs.logIn(first)
        let id = try #require(Self.user(registered))
        #expect(id == .integer(1) || (id.integerValue.map { $0 % 2 == 1 } ?? false), "pair 1's ids are odd: \(id)")
        let user = UserID(rawValue: UInt64(try #require(id.integerValue)))
        #expect(Self.error(try await pairs.ask("auth.set_password", ["password": "my password"], actor: user)) == nil)

        pairs.wait(seconds: 61)
        let code = try await pairs.code(moved, purpose: "change_phone", actor: user)
        let changed = try await pairs.ask("profile.change_phone", ["phone": .string(moved), "code": .string(code)], actor: user)
        guard case .object(let view)? = Self.data(changed)["user"] else { throw ClusterError("no user: \(changed)") }
        #expect(view["phone"] == .string(moved) && view["id"] == id && Self.data(changed).count == 1,
                "the client's reply is its user, nothing of the steps: \(changed)")
        #expect(await pairs.claim(on: moved, in: 0)?.user == user)

        pairs.wait(seconds: 61)
        let byCode = try await pairs.logIn(moved)
        #expect(Self.user(byCode) == id && Self.data(byCode)["is_new"] == .bool(false) && Self.data(byCode)["token"] != nil, "\(byCode)")
        let byPassword = try await pairs.ask("auth.login_password", ["phone": .string(moved), "password": "my password"])
        #expect(Self.user(byPassword) == id, "\(byPassword)")
        let wrong = try await pairs.ask("auth.login_password", ["phone": .string(moved), "password": "not my password"])
        #expect(Self.error(wrong) == "invalid_credentials")
        let newcomer = try await pairs.logIn(first)
        #expect(Self.data(newcomer)["is_new"] == .bool(true) && Self.user(newcomer) != id, "the number it left is free: \(newcomer)")

        // Back to a number of its own pair: pair 0's claim is given up.
        pairs.wait(seconds: 61)
        let home = Self.phone(in: 1, 1)
        let again = try await pairs.code(home, purpose: "change_phone", actor: user)
        #expect(Self.error(try await pairs.ask("profile.change_phone", ["phone": .string(home), "code": .string(again)], actor: user)) == nil)
        #expect(await pairs.claim(on: moved, in: 0) == nil)
        #expect(Self.data(try await pairs.logIn(moved))["is_new"] == .bool(true))
    }

    @Test func aClaimNoAccountUsesLogsNobodyInAndIsReleasedOnceOld() async throws {
        let pairs = try await TwoPairs()
        defer { Task { await pairs.stop() } }
        let user = UserID(rawValue: UInt64(try #require(Self.user(try await pairs.logIn(Self.phone(in: 1, 0)))?.integerValue)))
        let stray = Self.phone(in: 0, 1)
        // Claimed, and the change never made (its node died between the steps).
        let code = try await pairs.code(stray, purpose: "change_phone", actor: user)
        let claimed = try await pairs.ask(PhoneMoveQuery.claim, ["phone": .string(stray), "code": .string(code)], actor: user)
        #expect(Self.data(claimed)["claimed_at"] != nil, "\(claimed)")

        pairs.wait(seconds: 61)
        let young = try await pairs.logIn(stray)
        #expect(Self.error(young) == "code_expired" && Self.user(young) == nil, "never a session for someone else: \(young)")
        #expect(await pairs.claim(on: stray, in: 0)?.user == user, "too young to be sure no move will take it")

        pairs.wait(seconds: PhoneClaimAges.releasableAfter / 1000)
        #expect(Self.error(try await pairs.logIn(stray)) == "code_expired")
        #expect(await pairs.claim(on: stray, in: 0) == nil, "old and unused: released")
        pairs.wait(seconds: 61)
        let registered = try await pairs.logIn(stray)
        #expect(Self.data(registered)["is_new"] == .bool(true) && Self.user(registered) != .integer(Int64(user.rawValue)))
    }

    @Test func aClaimTooOldToBeSureOfIsNotTakenAndAMoveTriedAgainGoesOn() async throws {
        let pairs = try await TwoPairs()
        defer { Task { await pairs.stop() } }
        let user = UserID(rawValue: UInt64(try #require(Self.user(try await pairs.logIn(Self.phone(in: 1, 0)))?.integerValue)))
        let target = Self.phone(in: 0, 2)
        pairs.wait(seconds: 61)
        let code = try await pairs.code(target, purpose: "change_phone", actor: user)
        _ = try await pairs.ask(PhoneMoveQuery.claim, ["phone": .string(target), "code": .string(code)], actor: user)
        // Tried again within the minute, with the code the claim used: it goes on with the claim.
        pairs.owners[0].clock.advance(milliseconds: 30_000)
        pairs.owners[1].clock.advance(milliseconds: PhoneClaimAges.takeWithin + 1_000)
        let late = try await pairs.ask("profile.change_phone", ["phone": .string(target), "code": .string(code)], actor: user)
        #expect(Self.error(late) == "code_expired", "the user's partition, a minute after the claim, does not take it: \(late)")
        pairs.owners[1].clock.advance(milliseconds: -(PhoneClaimAges.takeWithin + 1_000) + 30_000)
        let onTime = try await pairs.ask("profile.change_phone", ["phone": .string(target), "code": .string(code)], actor: user)
        guard case .object(let view)? = Self.data(onTime)["user"] else { throw ClusterError("not moved: \(onTime)") }
        #expect(view["phone"] == .string(target))
    }
}

private extension JSONValue {
    var integerValue: Int64? { if case .integer(let value) = self { value } else { nil } }
}
