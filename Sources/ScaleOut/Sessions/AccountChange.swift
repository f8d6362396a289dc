// What a node running a session (NodeSession.swift) must act on in the personal events it passes
// on: the owner changes the login of its own connections itself, and a node learns of the change
// only from the event. A runner's verification decided changes what the connection may do
// (`is_verified_runner` in each routed request's actor); a session logged out ends the login of
// every connection using it, and the event does not say which session, so the node asks.
import BangbangApplication
import JSON
import PartitionOwner

package enum AccountChange: Sendable, Equatable {
    /// `runner.verification_decided`: approved or not.
    case verificationDecided(approved: Bool)
    /// `account.logged_out`: one of the user's sessions was logged out.
    case loggedOut

    private static let markers: [[UInt8]] = [Array(#""event":"runner.verification_decided""#.utf8),
                                             Array(#""event":"account.logged_out""#.utf8)]

    /// The change a personal event's message reports, if any. Read whole only when it names one
    /// of the two events: every other event costs a search of its bytes.
    static func read(_ message: some RandomAccessCollection<UInt8>) -> AccountChange? {
        guard markers.contains(where: { contains(message, $0) }),
              case .object(let event)? = try? JSONParser.parse(Array(message)),
              case .string(let name)? = event["event"] else { return nil }
        switch name {
        case "account.logged_out":
            return .loggedOut
        case "runner.verification_decided":
            guard case .object(let data)? = event["data"], case .string(let status)? = data["status"] else { return nil }
            return .verificationDecided(approved: status == "approved")
        default:
            return nil
        }
    }

    private static func contains(_ bytes: some RandomAccessCollection<UInt8>, _ marker: [UInt8]) -> Bool {
        guard bytes.count >= marker.count else { return false }
        var start = bytes.startIndex
        let last = bytes.index(bytes.endIndex, offsetBy: -marker.count)
        while start <= last {
            if bytes[start] == marker[0], bytes[start...].starts(with: marker) { return true }
            start = bytes.index(after: start)
        }
        return false
    }
}
