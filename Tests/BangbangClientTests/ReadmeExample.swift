import BangbangClient

/// Logs in (or resumes the stored session), publishes an errand, watches the board and follows
/// the order until a runner takes it. `askForCode` is the app's SMS code screen.
func publishAndFollow(server: ServerURL, store: some SessionStore, phone: String,
                      askForCode: (CodeRequestResult) async throws -> String) async throws -> Order {
    let connection = BangbangConnection(configuration: ConnectionConfiguration(url: server), store: store)
    defer { Task { await connection.disconnect() } }
    if try await connection.connect() == nil {
        let sent = try await connection.send(RequestCode(phone: phone))
        _ = try await connection.send(LogInWithCode(phone: phone, code: try await askForCode(sent)))
    }
    let order = try await connection.send(.publish(.bounty(
        BountyDetails(title: "Carry a box", description: "from the south gate to dorm 3"),
        campus: "North", deadline: .now.advanced(by: .seconds(3600)), tip: 500)))
    let board = try await connection.watchBoard(BoardFilter(types: [.bounty], campus: "North"))
    print("open bounties on campus:", await board.orders.count)
    for await update in connection.updates {
        guard case .event(let event) = update, case .orderChanged(let changed, let change) = event.kind,
              changed.id == order.id else { continue }
        print("order \(order.id): \(change)")
        if change == .accepted { return changed }
    }
    throw BangbangError.cancelled
}
