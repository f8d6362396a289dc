// The decide half of the order lifecycle: commands in, events or typed errors out. Nothing
// here mutates; see the theory of operation in BoardShard.swift.

extension BoardShard {
    /// Validates a draft and allocates the next id of this shard. The random source draws the
    /// 4-digit delivery code when the publisher asked for one.
    public func decidePublish(_ submitted: OrderDraft, by publisher: UserID, now: Timestamp, rules: OrderRules,
                              using random: inout some RandomNumberGenerator) throws(DomainError) -> OrderEvent {
        let draft = try submitted.validated(now: now, rules: rules)
        let id = nextOrderID
        var code: String?
        if draft.wantsDeliveryCode {
            let digits = UInt16.random(in: 0...9999, using: &random)
            let text = String(digits)
            code = String(repeating: "0", count: 4 - text.count) + text
        }
        let order = Order(
            id: id, publisher: publisher, campus: draft.campus, createdAt: now, deadline: draft.deadline,
            tip: draft.tip, status: .open, runner: nil, acceptedAt: nil, autoConfirmAt: nil,
            deliveryCode: code, details: draft.details, participants: [],
            timeline: [TimelineEntry(status: .open, at: now, actor: publisher)],
            cancellation: nil, ratingByPublisher: nil, ratingByRunner: nil, revision: 0,
            searchText: draft.details.searchText)
        return OrderEvent(orderID: id, at: now, actor: publisher, change: .published(order), notify: [publisher])
    }

    /// Decides a command on one order of this shard.
    public func decide(_ command: OrderCommand, on id: OrderID, by actor: UserID, now: Timestamp,
                       rules: OrderRules) throws(DomainError) -> OrderEvent {
        guard let order = orders[id] else { throw DomainError(.notFound, "no such order") }
        let change = try Self.change(for: command, on: order, by: actor, now: now, rules: rules)
        var notify = order.parties
        notify.append(actor)
        return OrderEvent(orderID: id, at: now, actor: actor, change: change,
                          notify: Array(Set(notify)).sorted())
    }

    private static func change(for command: OrderCommand, on order: Order, by actor: UserID, now: Timestamp,
                               rules: OrderRules) throws(DomainError) -> OrderChange {
        let isGroup = order.type == .group
        switch command {
        case .accept(let isVerifiedRunner):
            guard !isGroup else { throw .transition(order.status, .accepted) }
            guard actor != order.publisher else {
                throw DomainError(.forbidden, "you cannot accept your own order")
            }
            guard isVerifiedRunner else {
                throw DomainError(.runnerNotVerified, "only verified runners may accept orders")
            }
            switch order.status {
            case .open:
                guard now < order.deadline else { throw DomainError(.orderClosed, "this order has expired") }
                return .accepted(runner: actor)
            case .accepted, .pickedUp, .inProgress, .delivered, .full:
                throw DomainError(.orderTaken, "another runner took this order first")
            case .completed, .cancelled, .expired:
                throw DomainError(.orderClosed, "this order is \(order.status.rawValue)")
            }

        case .pickUp, .start:
            try requireRunner(order, actor)
            let next: OrderStatus = command == .start ? .inProgress : .pickedUp
            let fits = command == .start ? order.type == .bounty : (order.type == .express || order.type == .purchase)
            guard fits, order.status == .accepted else { throw .transition(order.status, next) }
            return .progressed(to: next)

        case .deliver(let code):
            try requireRunner(order, actor)
            let ready = order.type == .bounty
                ? (order.status == .accepted || order.status == .inProgress)
                : order.status == .pickedUp
            guard ready else { throw .transition(order.status, .delivered) }
            guard let expected = order.deliveryCode else {
                return .delivered(autoConfirmAt: now.adding(milliseconds: rules.autoConfirmAfter))
            }
            guard let code, !code.isEmpty else {
                throw .invalid("code", "enter the delivery code the publisher gives you", minimum: 1)
            }
            guard code == expected else {
                throw DomainError(.wrongDeliveryCode, "the delivery code does not match")
            }
            return .delivered(autoConfirmAt: nil)

        case .confirm:
            try requirePublisher(order, actor)
            guard order.status == .delivered else { throw .transition(order.status, .completed) }
            return .confirmed(automatic: false)

        case .abandon:
            try requireRunner(order, actor)
            guard order.status == .accepted else { throw .transition(order.status, .open) }
            return .abandoned(runner: actor)

        case .cancel(let reason):
            try requirePublisher(order, actor)
            try OrderDraft.optionalText(reason, "reason", max: rules.maximumLongText)
            switch order.status {
            case .open, .full:
                return .cancelled(Cancellation(cause: .publisher, reason: reason, fee: 0, runner: nil))
            case .accepted, .pickedUp, .inProgress:
                guard let reason, reason.contains(where: { !$0.isWhitespace }) else {
                    throw .invalid("reason", "say why you cancel: a runner already took this order", minimum: 1)
                }
                let acceptedAt = order.acceptedAt ?? order.createdAt
                let withinGrace = now.milliseconds - acceptedAt.milliseconds < rules.cancellationGrace
                return .cancelled(Cancellation(cause: .publisher, reason: reason,
                                               fee: withinGrace ? 0 : rules.cancellationFee, runner: order.runner))
            case .delivered, .completed, .cancelled, .expired:
                throw .transition(order.status, .cancelled)
            }

        case .raiseTip(let newTip):
            guard !isGroup else {
                throw DomainError(.invalidTransition, "a group order has no runner, so no tip to raise")
            }
            try requirePublisher(order, actor)
            guard order.status == .open else {
                throw DomainError(.invalidTransition,
                                  "the tip can only be raised while the order is open, not \(order.status.rawValue)")
            }
            guard newTip > order.tip else {
                throw .invalid("tip", "the new tip must be more than the current \(OrderDraft.yuan(order.tip))",
                               minimum: order.tip + 1)
            }
            try OrderDraft.requireMoney(newTip, "tip", max: rules.maximumTip)
            return .tipRaised(to: newTip)

        case .join:
            guard let group = order.groupDetails else { throw .transition(order.status, .full) }
            guard actor != order.publisher else {
                throw DomainError(.forbidden, "you cannot join your own group order")
            }
            guard !order.participants.contains(actor) else {
                throw DomainError(.alreadyJoined, "you already hold a share of this order")
            }
            guard order.status == .open || order.status == .full else {
                throw DomainError(.orderClosed, "this order is \(order.status.rawValue)")
            }
            guard now < group.closesAt else { throw DomainError(.orderClosed, "this order has closed") }
            guard order.status == .open else { throw DomainError(.groupFull, "every share of this order is taken") }
            return .joined(actor)

        case .leave:
            guard let group = order.groupDetails else { throw .transition(order.status, .open) }
            guard order.participants.contains(actor) else {
                throw DomainError(.notJoined, "you hold no share of this order")
            }
            guard order.status == .open || order.status == .full else { throw .transition(order.status, .open) }
            guard now < group.closesAt else {
                throw DomainError(.orderClosed, "shares cannot be given back after the closing time")
            }
            return .left(actor)

        case .complete:
            guard let group = order.groupDetails else { throw .transition(order.status, .completed) }
            try requirePublisher(order, actor)
            guard order.status == .open || order.status == .full else { throw .transition(order.status, .completed) }
            guard order.status == .full || now >= group.closesAt else {
                throw DomainError(.invalidTransition, "a group order completes when full or after its closing time")
            }
            let quorum = max(group.minimumFill ?? 1, 1)
            guard order.participants.count >= quorum else {
                throw DomainError(.invalidTransition, "a group order needs at least \(quorum) participants to complete")
            }
            return .groupCompleted(automatic: false)

        case .rate(let stars, let comment):
            guard !isGroup, order.status == .completed else {
                throw DomainError(.invalidTransition, "ratings open once the order is completed")
            }
            let byPublisher: Bool
            if actor == order.publisher {
                byPublisher = true
            } else if actor == order.runner {
                byPublisher = false
            } else {
                throw DomainError(.notYourOrder, "only the publisher and the runner rate an order")
            }
            guard (byPublisher ? order.ratingByPublisher : order.ratingByRunner) == nil else {
                throw DomainError(.alreadyRated, "you already rated this order")
            }
            guard let closedAt = order.closedAt, now < closedAt.adding(milliseconds: rules.ratingWindow) else {
                throw DomainError(.invalidTransition, "the rating window has closed")
            }
            guard (1...5).contains(stars) else { throw .invalid("stars", "give 1 to 5 stars", minimum: 1, maximum: 5) }
            try OrderDraft.optionalText(comment, "comment", max: rules.maximumCommentLength)
            return .rated(byPublisher: byPublisher, Rating(stars: stars, comment: comment, at: now))
        }
    }

    private static func requireRunner(_ order: Order, _ actor: UserID) throws(DomainError) {
        guard order.runner == actor, order.type != .group else {
            throw DomainError(.notYourOrder, "only the runner of this order may do that")
        }
    }

    private static func requirePublisher(_ order: Order, _ actor: UserID) throws(DomainError) {
        guard order.publisher == actor else {
            throw DomainError(.notYourOrder, "only the publisher of this order may do that")
        }
    }
}
