// How domain events are named on the personal stream (protocol/events.md).
import BangbangCore
import BangbangProtocol

package enum OrderNotifications {
    package static func changeName(_ change: OrderChange) -> String {
        switch change {
        case .published: "published"
        case .accepted: "accepted"
        case .progressed(let status): status.rawValue
        case .delivered: "delivered"
        case .confirmed(let automatic): automatic ? "auto_confirmed" : "confirmed"
        case .abandoned: "abandoned"
        case .cancelled: "cancelled"
        case .expired: "expired"
        case .tipRaised: "tip_raised"
        case .joined: "joined"
        case .left: "left"
        case .closedForJoining: "closed_for_joining"
        case .groupCompleted: "completed"
        case .rated: "rated"
        case .movedToArchive: "moved_to_archive"
        }
    }
}

package enum AccountNotifications {
    /// The personal event for an account change, or nil when nobody is told.
    static func describe(_ event: AccountEvent) -> (name: String, data: JSONValue)? {
        switch event {
        case .registered, .verificationSubmitted, .feedbackSubmitted, .sessionsPurged, .phoneClaimed, .phoneReleased:
            return nil
        case .loggedIn(let login):
            return ("account.login", ["device": login.session.device.map(JSONValue.string) ?? .null,
                                      "method": .string(login.method.rawValue)])
        case .passwordSet:
            return ("account.password_changed", [:])
        case .sessionRevoked:
            return ("account.logged_out", [:])
        case .profileUpdated:
            return ("account.profile_updated", [:])
        case .phoneChanged:
            return ("account.phone_changed", [:])
        case .verificationDecided(let decision):
            var data: [String: JSONValue] = ["status": .string(decision.isApproved ? "approved" : "rejected")]
            if let reason = decision.reason { data["reason"] = .string(reason) }
            return ("runner.verification_decided", .object(data))
        case .administratorChanged(let change):
            return ("account.administrator_changed", ["is_administrator": .bool(change.isAdministrator)])
        }
    }
}
