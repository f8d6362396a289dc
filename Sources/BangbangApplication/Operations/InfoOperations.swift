// info.get: what a client shows before anyone logs in — the support phone, the campuses, the
// order types, the limits its forms should enforce and the order rules its dialogs quote
// (protocol/operations-accounts.md).
// Everything comes from configuration and fixed rules, so it needs no owner's queue.
import BangbangCore
import BangbangProtocol

package enum InfoOperations {
    package static let all: [Operation] = [get]

    /// Reported by `info.get`; kept in step with the `bangbang --version` of the executable.
    static let serverVersion = "0.1.0"

    package static let get = Operation("info.get", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        context.succeed(data(configuration: context.app.configuration, rules: context.app.orderRules))
    }

    /// The reply's data, the same on every node of a deployment configured alike.
    package static func data(configuration: ServerConfiguration, rules: OrderRules) -> JSONValue {
        var data: [String: JSONValue] = [
            "version": .string(serverVersion),
            "campuses": .array(configuration.campuses.map(JSONValue.string)),
            "order_types": .array(OrderType.allCases.map { .string($0.rawValue) }),
            "limits": [
                "max_message_bytes": .integer(Int64(configuration.maxMessageBytes)),
                "max_tip": .integer(rules.maximumTip),
                "max_goods_budget": .integer(rules.maximumGoodsBudget),
                "password_min_length": .integer(Int64(PasswordRules.length.lowerBound)),
                "password_max_length": .integer(Int64(PasswordRules.length.upperBound)),
                "nickname_max_length": .integer(Int64(ProfileLimits.nickname.upperBound)),
                "feedback_max_length": .integer(Int64(FeedbackLimits.text.upperBound)),
            ],
            // What an app needs to word its cancel dialog and its "confirms by itself" note.
            "order_rules": [
                "cancel_grace_ms": .integer(rules.cancellationGrace),
                "cancel_fee": .integer(rules.cancellationFee),
                "auto_confirm_ms": .integer(rules.autoConfirmAfter),
            ],
        ]
        if let phone = configuration.supportPhone { data["support_phone"] = .string(phone) }
        return .object(data)
    }
}
