// The direct snapshot reader (SnapshotReader.swift) against the tree-then-Codable decoder it
// replaces on recovery: the same contents from the same bytes, for snapshots a server wrote and
// for states with every optional field absent and present; the same verdict on every truncation
// and on thousands of damaged snapshots; and a refused snapshot refused with the tree decoder's
// own error.
import BangbangCore
import Foundation
import Journal
import Testing
import TestSupport
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut
@testable import BangbangStorage

enum Snapshots {
    static let now = TestClock.start

    /// Accounts with every optional field absent, and present; sessions revoked and live; feedback
    /// with and without a contact; streams, orders and board numbering.
    static func everyField() -> SnapshotContents {
        let sessions = [SessionID(high: 1, low: .max), SessionID(high: .max, low: 0), SessionID(high: 7, low: 7)]
        let plain = UserAccount(id: UserID(1), phone: PhoneNumber(rawValue: "+8613800000001"), passwordHash: nil,
                                profile: Profile(nickname: "用户1"), verification: nil, registeredAt: now, sessions: [])
        let full = UserAccount(
            id: UserID(.max), phone: PhoneNumber(rawValue: "+8613800000002"), passwordHash: "scrypt$1$abc",
            profile: Profile(nickname: "Ada \"A\"", avatarURL: "https://example.com/a.png", gender: .female,
                             campus: "north", dorm: "7-512", bio: "line one\nline two"),
            verification: RunnerVerification(status: .rejected, realName: "李雷", studentID: "2024001", school: "north",
                                             submittedAt: now, decidedAt: now.adding(milliseconds: 5), decidedBy: UserID(1),
                                             rejectionReason: "blurry"),
            registeredAt: Timestamp(milliseconds: -3), sessions: [sessions[0], sessions[1]])
        let pending = UserAccount(
            id: UserID(3), phone: PhoneNumber(rawValue: "+8613800000003"), passwordHash: nil,
            profile: Profile(nickname: "c", gender: .male),
            verification: RunnerVerification(status: .pending, realName: "韩梅梅", studentID: "7", school: "south", submittedAt: now),
            registeredAt: now, sessions: [sessions[2]])
        let accounts = AccountState(
            accounts: [plain.id: plain, full.id: full, pending.id: pending],
            userByPhone: [plain.phone: plain.id, full.phone: full.id, pending.phone: pending.id],
            sessions: [sessions[0]: Session(id: sessions[0], user: full.id, device: "iPhone 15", issuedAt: now,
                                            expiresAt: now.adding(milliseconds: 1_000), revokedAt: now.adding(milliseconds: 2)),
                       sessions[1]: Session(id: sessions[1], user: full.id, device: nil, issuedAt: now, expiresAt: now),
                       sessions[2]: Session(id: sessions[2], user: pending.id, device: "", issuedAt: now, expiresAt: now)],
            grantedAdministrators: [UserID(1), UserID(3)],
            feedback: [FeedbackEntry(id: 1, user: UserID(1), text: "slow map", contact: nil, submittedAt: now),
                       FeedbackEntry(id: 2, user: UserID(.max), text: "好", contact: "ada@example.com", submittedAt: now)],
            nextUserID: 4,
            phoneClaims: [PhoneNumber(rawValue: "+8613600000009"): PhoneClaim(user: UserID(1_000_001), at: now),
                          PhoneNumber(rawValue: "+8613600000010"): PhoneClaim(user: UserID(.max), at: Timestamp(milliseconds: -7))])
        var shard = BoardShard(index: 1)
        var random = SeededGenerator(seed: 3)
        for (serial, draft) in [Drafts.bounty(now: now), Drafts.express(now: now, code: true), Drafts.group(now: now)].enumerated() {
            let event = try! shard.decidePublish(draft, by: UserID(UInt64(serial + 1)), now: now, rules: OrderRules(), using: &random)
            _ = shard.apply(event)
        }
        let message = Array(#"{"event":"order.changed","data":{"id":"5","note":"\"quoted\" 好"}}"#.utf8)
        let streams = [UserID(1): PersonalStream(lastSequence: 9, entries: [.init(sequence: 8, at: now, message: message),
                                                                           .init(sequence: 9, at: now, message: [])]),
                       UserID(3): PersonalStream(lastSequence: 0, entries: [])]
        return SnapshotContents(accounts: accounts, shards: [BoardShard(index: 0), shard], streams: streams,
                                boardSequences: [.bounty: 4, .express: .max, .group: 0])
    }

    /// What the direct reader alone makes of `bytes`: nil if it refuses them, `.some(nil)` if it
    /// leaves them to the tree decoder (a version it does not read).
    static func direct(_ bytes: [UInt8]) -> SnapshotContents?? {
        guard bytes.first == SnapshotContents.keyedBinaryTag else { return nil }
        var reader = KeyedBinaryReader(bytes: bytes.dropFirst())
        let contents: SnapshotContents?
        do { contents = try reader.readSnapshot() } catch { return nil }
        return reader.isAtEnd ? .some(contents) : nil
    }

    static func tree(_ bytes: [UInt8]) -> SnapshotContents? { try? SnapshotContents.decodeThroughTree(bytes) }

    /// The direct reader agrees with the tree decoder on `bytes`, and `decode` gives the tree
    /// decoder's value or error.
    static func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        let tree = tree(bytes)
        switch direct(bytes) {
        case .some(.some(let contents)): #expect(contents == tree, sourceLocation: sourceLocation)
        case .some(.none): break
        case .none: #expect(tree == nil, "the tree decoder reads what the direct reader refused", sourceLocation: sourceLocation)
        }
        do {
            #expect(try SnapshotContents.decode(bytes) == tree, sourceLocation: sourceLocation)
        } catch {
            do {
                _ = try SnapshotContents.decodeThroughTree(bytes)
                Issue.record("refused with \(error); the tree decoder reads it", sourceLocation: sourceLocation)
            } catch let treeError {
                #expect("\(error)" == "\(treeError)", sourceLocation: sourceLocation)
            }
        }
    }
}

@Suite struct SnapshotReaderTests {
    @Test func readsEveryFieldAsCodableDoes() throws {
        let contents = Snapshots.everyField()
        let bytes = try contents.encoded()
        #expect(Snapshots.direct(bytes) == .some(contents))
        #expect(Snapshots.tree(bytes) == contents)
        #expect(try SnapshotContents.decode(bytes) == contents)
        let orders = try KeyedBinaryEncoder.encode(contents, after: SnapshotContents.keyedBinaryTag, usesDirectWriters: false)
        #expect(Snapshots.direct(orders) == .some(contents))
    }

    /// A server's own snapshot after logins, profile edits, a verification, a grant, feedback, a
    /// logout, orders in every state and their personal-stream events.
    @Test func readsWhatAServerWrote() async throws {
        let harness = try ApplicationHarness(shardsPerType: 2)
        let admin = try await harness.logIn(ApplicationHarness.adminPhone)
        let publisher = try await harness.logIn("+8613900000001")
        let runner = try await harness.logIn("+8613900000002")
        _ = try await harness.logIn("+8613900000003")
        try await harness.changeAccounts { store, now in
            try store.decideProfileUpdate(user: publisher, update: ProfileUpdate(avatarURL: "https://example.com/p.png", gender: .male,
                                                                                dorm: "7-512", bio: "hi"), now: now)
        }
        try await harness.changeAccounts { store, now in
            try store.decideVerificationSubmission(user: runner, realName: "李雷", studentID: "2024001", school: "north", now: now)
        }
        try await harness.changeAccounts { store, now in try store.decideVerificationApproval(administrator: admin, user: runner, now: now) }
        try await harness.changeAccounts { store, now in try store.decideAdministratorGrant(by: admin, to: publisher, now: now) }
        try await harness.changeAccounts { store, now in try store.decideFeedback(user: runner, text: "slow map", contact: nil, now: now) }
        try await harness.changeAccounts { store, now in
            try store.decideFeedback(user: publisher, text: "thanks", contact: "p@example.com", now: now)
        }
        try await harness.changeAccounts { store, now in
            try store.decideSetPassword(user: publisher, passwordHash: "scrypt$record", now: now)
        }
        let session = try #require(await harness.accountState().accounts[runner]?.sessions.first)
        try await harness.changeAccounts { store, now in try store.decideRevokeSession(user: runner, session: session, now: now) }
        let now = harness.clock.now
        let accepted = try await harness.publish(Drafts.express(now: now, code: true), by: publisher)
        try await harness.run(.accept(isVerifiedRunner: true), on: accepted, by: runner)
        _ = try await harness.publish(Drafts.bounty(now: now), by: publisher)
        _ = try await harness.publish(Drafts.purchase(now: now), by: publisher)
        let cancelled = try await harness.publish(Drafts.group(now: now), by: publisher)
        try await harness.run(.cancel(reason: "changed my mind"), on: cancelled, by: publisher)

        let cut = try #require(harness.snapshot())
        let bytes = try cut.contents.encoded()
        let direct = try #require(Snapshots.direct(bytes) ?? nil)
        #expect(direct.accounts == cut.contents.accounts)
        #expect(direct.shards == cut.contents.shards)
        #expect(direct.boardSequences == cut.contents.boardSequences)
        #expect(!direct.streams.isEmpty)
        #expect(direct.streams.mapValues { Array($0.live) } == cut.contents.streams.mapValues { Array($0.live) })
        #expect(direct == Snapshots.tree(bytes))

        // And the file it wrote, read back as a restart reads it.
        try harness.app.journal.close()
        let (journal, recovery) = try WriteAheadLog.open(directory: harness.configuration.dataDirectory)
        defer { try? journal.close() }
        let written = try #require(recovery.snapshot)
        #expect(try SnapshotContents.decode(written) == Snapshots.tree(written))
        #expect(Snapshots.direct(written) == .some(direct))
    }

    @Test func theSnapshotWrittenBeforeTheArchiveIsStillRead() throws {
        let copy = try makeTemporaryDirectory("snapshot-fixture")
        defer { try? FileManager.default.removeItem(atPath: copy) }
        for name in try FileManager.default.contentsOfDirectory(atPath: ArchiveMigrationTests.fixture) where name != "README.md" {
            try FileManager.default.copyItem(atPath: ArchiveMigrationTests.fixture + "/" + name, toPath: copy + "/" + name)
        }
        let (journal, recovery) = try WriteAheadLog.open(directory: copy)
        defer { try? journal.close() }
        let bytes = try #require(recovery.snapshot)
        let contents = try SnapshotContents.decode(bytes)
        #expect(contents.shards.flatMap(\.orders.values).count > 20)
        #expect(contents.accounts.accounts.count > 3)
        Snapshots.expectAgreement(bytes)
        // Rewritten in today's form, it reads the same through either path.
        let rewritten = try contents.encoded()
        #expect(Snapshots.direct(rewritten) == .some(contents))
        Snapshots.expectAgreement(rewritten)
    }

    /// Members in another order, unknown ones and optionals written as null, as Codable takes them.
    @Test func readsMembersInAnyOrderSkipsUnknownOnesAndTakesNullAsAbsent() throws {
        var writer = KeyedBinaryWriter(header: SnapshotContents.keyedBinaryTag)
        writer.beginKeyed()
        writer.key("boardSequences")
        writer.beginUnkeyed()
        writer.write("group")
        writer.write(signed: 5)
        writer.write("group")
        writer.write(unsigned: 6)
        writer.endUnkeyed()
        writer.key("streams")
        writer.beginUnkeyed()
        writer.endUnkeyed()
        writer.key("addedLater")
        writer.beginUnkeyed()
        writer.write("x")
        writer.endUnkeyed()
        writer.key("shards")
        writer.beginUnkeyed()
        writer.endUnkeyed()
        writer.key("accounts")
        writer.beginKeyed()
        writer.key("nextUserID")
        writer.write(unsigned: 2)
        writer.key("accounts")
        writer.beginUnkeyed()
        writer.write(unsigned: 1)
        writer.beginKeyed()
        writer.key("verification")
        writer.writeNull()
        writer.key("passwordHash")
        writer.writeNull()
        writer.member("sessions", [UserID]())
        writer.member("registeredAt", Snapshots.now)
        writer.key("profile")
        writer.beginKeyed()
        writer.key("bio")
        writer.writeNull()
        writer.member("gender", "male")
        writer.member("nickname", "n")
        writer.endKeyed()
        writer.member("phone", "+8613800000001")
        writer.member("id", UserID(1))
        writer.endKeyed()
        writer.endUnkeyed()
        for name: StaticString in ["userByPhone", "sessions", "grantedAdministrators", "feedback"] {
            writer.key(name)
            writer.beginUnkeyed()
            writer.endUnkeyed()
        }
        writer.endKeyed()
        writer.member("formatVersion", 3)
        writer.endKeyed()

        let account = UserAccount(id: UserID(1), phone: PhoneNumber(rawValue: "+8613800000001"), passwordHash: nil,
                                  profile: Profile(nickname: "n", gender: .male), verification: nil,
                                  registeredAt: Snapshots.now, sessions: [])
        let expected = SnapshotContents(
            accounts: AccountState(accounts: [UserID(1): account], userByPhone: [:], sessions: [:], grantedAdministrators: [],
                                   feedback: [], nextUserID: 2),
            shards: [], streams: [:], boardSequences: [.group: 6])
        #expect(Snapshots.tree(writer.bytes) == expected)
        #expect(Snapshots.direct(writer.bytes) == .some(expected))
    }

    @Test func leavesOtherVersionsToTheTreeDecoder() throws {
        var contents = Snapshots.everyField()
        for version in [1, 9] {
            contents.formatVersion = version
            let bytes = try KeyedBinaryEncoder.encode(contents, after: SnapshotContents.keyedBinaryTag)
            #expect(Snapshots.direct(bytes) == .some(nil))
            Snapshots.expectAgreement(bytes)
        }
        contents.formatVersion = 9
        let unsupported = try KeyedBinaryEncoder.encode(contents, after: SnapshotContents.keyedBinaryTag)
        do {
            _ = try SnapshotContents.decode(unsupported)
            Issue.record("a snapshot of format 9 was accepted")
        } catch {
            #expect("\(error)".contains("snapshot format 9 is not supported"))
        }
    }

    @Test func refusesEveryTruncation() throws {
        let bytes = try Snapshots.everyField().encoded()
        for length in 1..<bytes.count {
            let cut = Array(bytes[..<length])
            #expect(Snapshots.direct(cut) == nil)
            #expect(throws: (any Error).self) { try SnapshotContents.decode(cut) }
        }
    }

    /// Thousands of damaged snapshots: the reader never traps and agrees with the tree decoder
    /// on whether they are a snapshot and which, and a refusal is the tree decoder's error.
    @Test func agreesWithTheTreeDecoderOnDamagedSnapshots() throws {
        var random = SeededGenerator(seed: 14)
        let bytes = try Snapshots.everyField().encoded()
        var refused = 0
        for _ in 0..<3_000 {
            let damaged = random.damaged(bytes, from: 1)
            if Snapshots.tree(damaged) == nil { refused += 1 }
            Snapshots.expectAgreement(damaged)
        }
        #expect(refused > 500, "damage should mostly be refused, not only \(refused) times")
    }
}
