// info.get: what a client shows before anyone logs in — the support phone, the campuses, the
// order types, the limits its forms should enforce and the order rules its dialogs quote
// (protocol/operations-accounts.md).
// Everything comes from configuration and fixed rules, so it needs no owner's queue.
import BangbangCore
import BangbangProtocol

enum InfoOperations {
    static let all: [Operation] = [get]

    /// Reported by `info.get`; kept in step with the `bangbang --version` of the executable.
    static let serverVersion = "0.1.0"

    static let get = Operation("info.get", requiresLogin: false) { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let app = context.app
        let configuration = app.configuration
        var data: [String: JSONValue] = [
            "version": .string(serverVersion),
            "campuses": .array(configuration.campuses.map(JSONValue.string)),
            "order_types": .array(OrderType.allCases.map { .string($0.rawValue) }),
            "limits": [
                "max_message_bytes": .integer(Int64(configuration.maxMessageBytes)),
                "max_tip": .integer(app.orderRules.maximumTip),
                "max_goods_budget": .integer(app.orderRules.maximumGoodsBudget),
                "password_min_length": .integer(Int64(PasswordRules.length.lowerBound)),
                "password_max_length": .integer(Int64(PasswordRules.length.upperBound)),
                "nickname_max_length": .integer(Int64(ProfileLimits.nickname.upperBound)),
                "feedback_max_length": .integer(Int64(FeedbackLimits.text.upperBound)),
            ],
            // What an app needs to word its cancel dialog and its "confirms by itself" note.
            "order_rules": [
                "cancel_grace_ms": .integer(app.orderRules.cancellationGrace),
                "cancel_fee": .integer(app.orderRules.cancellationFee),
                "auto_confirm_ms": .integer(app.orderRules.autoConfirmAfter),
            ],
        ]
        if let phone = configuration.supportPhone { data["support_phone"] = .string(phone) }
        context.succeed(.object(data))
    }
}
