// What a node running a session reads from the personal events it passes on: a verification
// decided and a session logged out, from the events as the owner encodes them, and nothing from
// any other event, whatever its data holds.
import BangbangCore
import BangbangProtocol
import Testing
@testable import BangbangApplication
@testable import BangbangServer
@testable import PartitionOwner
@testable import ScaleOut

@Suite struct AccountChangeTests {
    @Test func theTwoEventsAreReadFromTheOwnersBytes() {
        let approved = EventMessage.personal(name: "runner.verification_decided", sequence: 8, data: ["status": "approved"])
        let rejected = EventMessage.personal(name: "runner.verification_decided", sequence: 9,
                                             data: ["status": "rejected", "reason": "The photo is unreadable"])
        let loggedOut = EventMessage.personal(name: "account.logged_out", sequence: 10, data: [:])
        #expect(AccountChange.read(approved) == .verificationDecided(approved: true))
        #expect(AccountChange.read(rejected) == .verificationDecided(approved: false))
        #expect(AccountChange.read(loggedOut) == .loggedOut)
        #expect(AccountChange.read(loggedOut[...]) == .loggedOut, "a slice reads as the array")
    }

    @Test func otherEventsChangeNothingWhateverTheirDataSays() {
        let login = EventMessage.personal(name: "account.login", sequence: 7, data: ["device": "Redmi", "method": "code"])
        // An order whose text names the events: inside a JSON string the quotes are escaped.
        let sly = EventMessage.personal(name: "order.changed", sequence: 11, data: [
            "change": "published", "order": ["details": ["title": #""event":"account.logged_out""#]]])
        // A key of the data spelled like the marker does not make the event one.
        let nested = EventMessage.personal(name: "order.changed", sequence: 12, data: ["event": "account.logged_out"])
        for message in [login, sly, nested] { #expect(AccountChange.read(message) == nil, "\(String(decoding: message, as: UTF8.self))") }
        #expect(AccountChange.read(Array(#"{"event":"account.logged_out""#.utf8)) == nil, "unreadable")
        #expect(AccountChange.read([UInt8]()) == nil)
        let noStatus = EventMessage.personal(name: "runner.verification_decided", sequence: 8, data: [:])
        #expect(AccountChange.read(noStatus) == nil)
    }
}
