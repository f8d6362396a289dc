// Who the clients of a protocol scenario are, and how they become logged-in users and approved
// runners: phone numbers, the SMS-code login of a --dev server, the verification request, and
// the administrator who approves it.

/// What a client plays in a protocol scenario.
enum ParticipantRole: Sendable {
    case runner
    case publisher
    case administrator
}

/// One client's identity. Loop-confined with its worker.
struct Participant {
    var role: ParticipantRole
    var phone: String
    var token: String?
    var userID: Int64?
    /// The last personal-stream `seq` seen, handed back to `auth.resume` after a reconnect.
    var lastSequence: Int64 = 0
}

/// Phone numbers no earlier run and no other process of this run is likely to have used: the
/// server allows one SMS code per phone per minute and ten a day, so every run needs fresh ones.
struct PhoneBook: Sendable {
    /// 10^8 mainland numbers under the +86 139 prefix.
    static let capacity: UInt64 = 100_000_000
    let base: UInt64

    init(seed: UInt64) {
        var random = FastRandom(seed: seed)
        base = random.next() % Self.capacity
    }

    func phone(for tag: Int) -> String {
        let number = (base &+ UInt64(tag)) % Self.capacity
        let digits = String(number)
        return "+86139" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
