// A whole errand of each type between real clients of a real server, through the library only:
// the publisher publishes, the runner finds it on a live Board and takes it, and each step
// reaches the other side as a typed event. And the accept race: one winner.
import Foundation
import Testing
import TestSupport
@testable import BangbangClient

extension LiveServerTests {
    @Suite(.timeLimit(.minutes(2))) struct ErrandTests {
        @Test func expressWithADeliveryCodeFromBoardToRatings() async throws {
            let server = try ServerProcess.start()
            let (publisher, _) = try await Live.user(server)
            let (runner, runnerUser) = try await Live.runner(server)
            let publisherUpdates = UpdateRecorder(publisher)
            let runnerUpdates = UpdateRecorder(runner)
            let board = try await runner.watchBoard(BoardFilter(types: [.express], campus: "North"))

            let draft = OrderDraft.express(ExpressDetails(pickupStation: "Cainiao station 3", pickupCode: "8-2-1043",
                                                          parcelSize: .medium, dropOffPlace: "Dorm 7", dropOffRoom: "512",
                                                          contactPhone: "+8613812345678"),
                                           campus: "North", deadline: Live.inAnHour, tip: 300, requestsDeliveryCode: true)
            let published = try await publisher.send(.publish(draft))
            let code = try #require(published.deliveryCode)
            guard case .express(let details) = published.details else { Issue.record("\(published.details)"); return }
            #expect(details.contactPhone == "+8613812345678")

            #expect(await eventually { await board.orders.map(\.id) == [published.id] }, "the runner's board shows it live")
            let listed = try #require(await board.orders.first)
            guard case .express(let anonymous) = listed.details else { return }
            #expect(anonymous.pickupCode == nil && anonymous.dropOffRoom == nil && listed.deliveryCode == nil,
                    "the board shows an anonymous view")

            let accepted = try await runner.send(.accept(published.id))
            #expect(accepted.status == .accepted && accepted.runner == runnerUser.id)
            guard case .express(let revealed) = accepted.details else { return }
            #expect(revealed.pickupCode == "8-2-1043" && accepted.deliveryCode == nil, "private details, never the code")
            #expect(await eventually { await board.orders.isEmpty }, "taken: it leaves the board")
            #expect(await publisherUpdates.waitFor(.accepted, of: published.id))

            _ = try await runner.send(.pickUp(published.id))
            #expect(await publisherUpdates.waitFor(.pickedUp, of: published.id))
            do {
                _ = try await runner.send(.deliver(published.id, code: code == "0000" ? "1111" : "0000"))
                Issue.record("a wrong delivery code was accepted")
            } catch {
                #expect(error.code == .wrongDeliveryCode)
            }
            let delivered = try await runner.send(.deliver(published.id, code: code))
            #expect(delivered.status == .completed, "the right code completes the order at once")
            #expect(await publisherUpdates.waitFor(.delivered, of: published.id))

            let ratedByPublisher = try await publisher.send(RateOrder(published.id, stars: 5, comment: "fast"))
            #expect(ratedByPublisher.ratingByPublisher?.stars == 5)
            let ratedByRunner = try await runner.send(RateOrder(published.id, stars: 4))
            #expect(ratedByRunner.ratingByRunner?.comment == "")
            #expect(await publisherUpdates.waitFor(.rated, of: published.id))
            #expect(await eventually { runnerUpdates.changes(of: published.id) == [.accepted, .pickedUp, .delivered, .rated, .rated] },
                    "\(runnerUpdates.changes(of: published.id))")
            #expect(publisherUpdates.isGapless && runnerUpdates.isGapless)
            let earnings = try await runner.send(GetEarnings())
            #expect(earnings.completedCount == 1 && earnings.tips == 300 && earnings.ratingStars == 5)
            await board.stop()
            for connection in [publisher, runner] { await connection.disconnect() }
        }

        @Test func purchaseConfirmedByThePublisher() async throws {
            let server = try ServerProcess.start()
            let (publisher, _) = try await Live.user(server)
            let (runner, _) = try await Live.runner(server)
            let runnerUpdates = UpdateRecorder(runner)
            let draft = OrderDraft.purchase(PurchaseDetails(items: [PurchaseItem(name: "water", quantity: 2),
                                                                    PurchaseItem(name: "bread", note: "whole wheat")],
                                                            store: "FamilyMart", goodsBudget: 3_000, dropOffPlace: "Library"),
                                            campus: "North", deadline: Live.inAnHour, tip: 200)
            let order = try await publisher.send(.publish(draft))
            _ = try await runner.send(.accept(order.id))
            _ = try await runner.send(.pickUp(order.id))
            let delivered = try await runner.send(.deliver(order.id))
            #expect(delivered.status == .delivered && delivered.autoConfirmAt != nil)
            let confirmed = try await publisher.send(.confirm(order.id))
            #expect(confirmed.status == .completed)
            guard case .purchase(let details) = confirmed.details else { Issue.record("\(confirmed.details)"); return }
            #expect(details.items.map(\.quantity) == [2, 1] && details.goodsBudget == 3_000)
            #expect(await runnerUpdates.waitFor(.confirmed, of: order.id))
            let mine = try await publisher.send(MyOrders(scope: .history))
            #expect(mine.orders.map(\.id) == [order.id])
            for connection in [publisher, runner] { await connection.disconnect() }
        }

        @Test func bountyStartedDeliveredAndConfirmed() async throws {
            let server = try ServerProcess.start()
            let (publisher, _) = try await Live.user(server)
            let (runner, _) = try await Live.runner(server)
            let publisherUpdates = UpdateRecorder(publisher)
            let order = try await publisher.send(.publish(.bounty(BountyDetails(title: "Carry a box", description: "gate to dorm 3",
                                                                                place: "South gate"),
                                                                  campus: "North", deadline: Live.inAnHour, tip: 500)))
            let raised = try await publisher.send(RaiseTip(order.id, to: 800))
            #expect(raised.tip == 800 && raised.revision == order.revision + 1)
            _ = try await runner.send(.accept(order.id))
            do {
                _ = try await runner.send(.pickUp(order.id))
                Issue.record("a bounty was picked up")
            } catch {
                #expect(error.code == .invalidTransition)
            }
            #expect(try await runner.send(.start(order.id)).status == .inProgress)
            #expect(try await runner.send(.deliver(order.id)).status == .delivered)
            #expect(try await publisher.send(.confirm(order.id)).status == .completed)
            #expect(await publisherUpdates.waitFor(.confirmed, of: order.id))
            #expect(publisherUpdates.changes(of: order.id) == [.published, .tipRaised, .accepted, .inProgress, .delivered, .confirmed])
            for connection in [publisher, runner] { await connection.disconnect() }
        }

        @Test func groupFilledByTwoParticipantsAndCompleted() async throws {
            let server = try ServerProcess.start()
            let (publisher, _) = try await Live.user(server)
            let (first, firstUser) = try await Live.user(server)
            let (second, secondUser) = try await Live.user(server)
            let firstUpdates = UpdateRecorder(first)
            let details = GroupDetails(kind: .carpool, subject: "to the railway station", closesAt: Timestamp.now.advanced(by: .seconds(1800)),
                                       capacity: 2, minimumFill: 2, pricePerShare: 1_500)
            let order = try await publisher.send(.publish(.group(details, campus: "North", deadline: Live.inAnHour)))
            #expect(order.tip == 0 && order.participantCount == 0)
            let board = try await first.watchBoard(BoardFilter(types: [.group]))
            #expect(await eventually { await board.orders.map(\.id) == [order.id] })

            #expect(try await first.send(.join(order.id)).participantCount == 1)
            do {
                _ = try await first.send(.join(order.id))
                Issue.record("joined twice")
            } catch {
                #expect(error.code == .alreadyJoined)
            }
            let full = try await second.send(.join(order.id))
            #expect(full.status == .full && full.participants.map(Set.init) == [firstUser.id, secondUser.id])
            #expect(await eventually { await board.orders.isEmpty }, "full: off the board")
            let completed = try await publisher.send(.complete(order.id))
            #expect(completed.status == .completed)
            #expect(await firstUpdates.waitFor(.completed, of: order.id))
            #expect(firstUpdates.changes(of: order.id) == [.joined, .joined, .completed])
            await board.stop()
            for connection in [publisher, first, second] { await connection.disconnect() }
        }

        @Test func racingRunnersGetExactlyOneWinner() async throws {
            let server = try ServerProcess.start()
            let (publisher, _) = try await Live.user(server)
            var runners: [BangbangConnection] = []
            for _ in 0..<6 { runners.append(try await Live.runner(server).0) }
            for round in 0..<3 {
                let order = try await publisher.send(.publish(.bounty(BountyDetails(title: "Race \(round)", description: "first come"),
                                                                      campus: "North", deadline: Live.inAnHour, tip: 100)))
                let outcomes = await withTaskGroup(of: Result<Order, BangbangError>.self) { group in
                    for runner in runners {
                        group.addTask {
                            do throws(BangbangError) { return .success(try await runner.send(.accept(order.id))) } catch {
                                return .failure(error)
                            }
                        }
                    }
                    var outcomes: [Result<Order, BangbangError>] = []
                    for await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                let winners = outcomes.compactMap { try? $0.get() }
                #expect(winners.count == 1, "round \(round): \(outcomes)")
                let losers = outcomes.compactMap { if case .failure(let error) = $0 { error.code } else { nil } }
                #expect(losers == Array(repeating: .orderTaken, count: runners.count - 1), "\(losers)")
                let final = try await publisher.send(GetOrder(order.id))
                #expect(final.runner == winners.first?.runner && final.status == .accepted)
            }
            for connection in runners + [publisher] { await connection.disconnect() }
        }
    }
}
