// The board list's rules (BoardState, pure) and its renewal through a connection that drops.
import BangbangProtocol
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

@Suite(.timeLimit(.minutes(1))) struct BoardTests {
    static func order(_ id: Int64, revision: Int64, tip: Int64 = 300, createdAt: Int64 = 1_000) throws -> Order {
        try Order(wire: Wire.order(id, revision: revision, tip: tip, createdAt: createdAt), at: [])
    }

    static func event(_ seq: Int64, _ change: BoardFeedEvent.Change) -> BoardFeedEvent {
        BoardFeedEvent(board: .bounty, seq: seq, change: change)
    }

    @Test func eventsApplyByRevisionAndFeedPosition() throws {
        var board = BoardState(filter: BoardFilter(types: [.bounty]))
        let changed1 = board.apply(Self.event(1, .entered(try Self.order(1, revision: 1))))
        #expect(!changed1, "nothing applies before the first list")

        board.reset(to: BoardSnapshot(orders: [try Self.order(10, revision: 3, createdAt: 5_000)], total: 1, seq: [.bounty: 20]))
        #expect(board.orders.map(\.id) == [10] && board.total == 1)

        // At or below the list's position: already in the list.
        let changed2 = board.apply(Self.event(20, .left(10, status: .accepted)))
        #expect(!changed2)
        #expect(board.orders.map(\.id) == [10])

        // An order that changed while the list was made: the older copy is ignored.
        let changed3 = board.apply(Self.event(21, .updated(try Self.order(10, revision: 2, createdAt: 5_000))))
        #expect(!changed3)
        let changed4 = board.apply(Self.event(22, .updated(try Self.order(10, revision: 3, createdAt: 5_000))))
        #expect(!changed4)
        let changed5 = board.apply(Self.event(23, .updated(try Self.order(10, revision: 4, tip: 500, createdAt: 5_000))))
        #expect(changed5)
        #expect(board.orders.first?.tip == 500)

        let changed6 = board.apply(Self.event(24, .entered(try Self.order(11, revision: 1, createdAt: 6_000))))
        #expect(changed6)
        let changed7 = board.apply(Self.event(25, .entered(try Self.order(12, revision: 1, createdAt: 4_000))))
        #expect(changed7)
        #expect(board.orders.map(\.id) == [11, 10, 12], "newest first")
        #expect(board.total == 3)

        // A replayed event (same feed position) changes nothing.
        let changed8 = board.apply(Self.event(25, .left(12, status: .accepted)))
        #expect(!changed8)
        let changed9 = board.apply(Self.event(26, .left(12, status: .accepted)))
        #expect(changed9)
        #expect(board.orders.map(\.id) == [11, 10] && board.total == 2)

        // Abandoned: the same order enters again, newer.
        let changed10 = board.apply(Self.event(27, .entered(try Self.order(12, revision: 3, createdAt: 4_000))))
        #expect(changed10)
        #expect(board.orders.map(\.id) == [11, 10, 12] && board.total == 3)

        board.interrupt()
        #expect(!board.isCurrent)
        let changed11 = board.apply(Self.event(28, .left(11, status: .cancelled)))
        #expect(!changed11, "a stale list waits for the next one")
        #expect(board.orders.count == 3, "an interrupted list stays on screen")
    }

    @Test func listsAreSortedAsTheFilterAsks() throws {
        var byTip = BoardState(filter: BoardFilter(types: [.bounty], sort: .tip))
        byTip.reset(to: BoardSnapshot(orders: [try Self.order(1, revision: 1, tip: 100), try Self.order(2, revision: 1, tip: 900),
                                               try Self.order(3, revision: 1, tip: 900)], total: 3, seq: [:]))
        #expect(byTip.orders.map(\.id) == [2, 3, 1], "highest tip first, ties by id")
        let changed12 = byTip.apply(Self.event(1, .updated(try Self.order(1, revision: 2, tip: 1_000))))
        #expect(changed12)
        #expect(byTip.orders.map(\.id) == [1, 2, 3])
    }

    @Test func aBoardIsRenewedAfterAReconnectWithEventsThatRacedTheList() async throws {
        let clock = ManualClock()
        let renewals = Counter()
        let transport = MockTransport { request, channel in
            switch request["op"] {
            case "board.subscribe":
                let round = renewals.next()
                if round == 1 {
                    channel.reply(to: request, ["orders": [Wire.order(1, revision: 1)], "total": 1, "seq": ["bounty": 5]])
                } else {
                    // Events of the new subscription racing its reply: one already in the list, one after it.
                    channel.push(Wire.feed("feed.enter", seq: 8, ["order": Wire.order(2, revision: 1)]))
                    channel.push(Wire.feed("feed.enter", seq: 10, ["order": Wire.order(3, revision: 1)]))
                    channel.reply(to: request, ["orders": [Wire.order(1, revision: 2), Wire.order(2, revision: 1)],
                                                "total": 2, "seq": ["bounty": 9]])
                }
            case "board.unsubscribe":
                channel.reply(to: request, [:])
            default:
                break
            }
        }
        let connection = ReconnectTests.connection(transport, clock: clock)
        try await connection.connect()
        let board = try await connection.watchBoard(BoardFilter(types: [.bounty]))
        var states = board.changes.makeAsyncIterator()
        let listed = await states.next()
        #expect(listed?.orders.map(\.id) == [1])

        let first = try #require(transport.channels.first)
        first.push(Wire.feed("feed.update", seq: 6, ["order": Wire.order(1, revision: 2, tip: 800)]))
        let updated = await states.next()
        #expect(updated?.orders.first?.tip == 800)

        first.end(code: nil, reason: "lost")
        let interrupted = await states.next()
        #expect(interrupted?.isCurrent == false)
        #expect(await eventually { ReconnectTests.backoffSleep(clock) != nil })
        clock.advance(by: ReconnectTests.backoff.maximum)

        // `changes` keeps only the newest state: the renewed list alone may be seen, or already
        // with the event that followed it.
        var afterRace: BoardState?
        while let state = await states.next() {
            guard state.isCurrent else { continue }
            if state.orders.contains(where: { $0.id == 3 }) {
                afterRace = state
                break
            }
            #expect(Set(state.orders.map(\.id)) == [1, 2], "the renewed list replaces the old one")
        }
        #expect(afterRace?.orders.map(\.id).sorted() == [1, 2, 3], "seq 8 was in the list; seq 10 came after it")
        #expect(afterRace?.orders.first { $0.id == 1 }?.tip == 300, "order 1 as the renewed list has it, not the old list's")
        #expect(await board.state.positions[.bounty] == 10)
        #expect(transport.channels.last?.operations == ["board.subscribe"])

        await board.stop()
        let ended = await states.next()
        #expect(ended == nil)
        #expect(await eventually { transport.channels.last?.operations == ["board.subscribe", "board.unsubscribe"] })
        await connection.disconnect()
    }
}

final class Counter: @unchecked Sendable {
    // Confinement: `lock` guards `value`.
    private let lock = NSLock()
    private var value = 0
    func next() -> Int { lock.withLock { value += 1; return value } }
}

