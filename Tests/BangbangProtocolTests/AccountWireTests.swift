import Testing
@testable import BangbangCore
@testable import BangbangProtocol

@Suite struct AccountWireTests {
    // MARK: Session ids

    @Test func sessionIDRoundTripsThroughItsHexForm() throws {
        for id in [SessionID(high: 0, low: 0), SessionID(high: .max, low: 1), SessionID(high: 0x0123_4567_89ab_cdef, low: .max)] {
            let session = Session(id: id, user: UserID(7), device: nil, issuedAt: Timestamp(rawValue: 1),
                                  expiresAt: Timestamp(rawValue: 2))
            guard case .object(let object) = SessionWire.encode(session, isCurrent: false),
                  case .string(let text)? = object["id"] else {
                Issue.record("no id in \(SessionWire.encode(session, isCurrent: false))")
                return
            }
            #expect(text.count == 32)
            #expect(try SessionWire.decodeID(text) == id)
            #expect(try SessionWire.decodeID(text.uppercased()) == id)
        }
    }

    @Test(arguments: ["", "abc", String(repeating: "0", count: 31), String(repeating: "0", count: 33),
                      String(repeating: "g", count: 32), String(repeating: "0", count: 31) + " ",
                      "+" + String(repeating: "0", count: 31), String(repeating: "é", count: 16)])
    func sessionIDRefusesAnythingButThirtyTwoHexDigits(text: String) {
        #expect(throws: DomainError(.invalidField, "session_id must be 32 hexadecimal digits", field: "session_id")) {
            try SessionWire.decodeID(text)
        }
    }

    @Test func sessionEncodingMarksTheCurrentDeviceAndOmitsAMissingName() {
        let session = Session(id: SessionID(high: 1, low: 2), user: UserID(7), device: "iPhone",
                              issuedAt: Timestamp(rawValue: 10), expiresAt: Timestamp(rawValue: 20))
        #expect(SessionWire.encode(session, isCurrent: true) == [
            "id": "00000000000000010000000000000002", "device": "iPhone",
            "issued_at": 10, "expires_at": 20, "is_current": true,
        ])
        var unnamed = session
        unnamed.device = nil
        guard case .object(let object) = SessionWire.encode(unnamed, isCurrent: false) else { return }
        #expect(object["device"] == nil)
        #expect(object["is_current"] == false)
    }

    // MARK: Feedback

    @Test func feedbackPageCarriesTheCursorOnlyWhenThereIsMore() {
        let entry = FeedbackEntry(id: 3, user: UserID(9), text: "slow map", contact: nil, submittedAt: Timestamp(rawValue: 5))
        #expect(FeedbackWire.encode(FeedbackPage(entries: [entry], nextBefore: nil)) == [
            "feedback": [["id": 3, "user_id": 9, "text": "slow map", "submitted_at": 5]],
        ])
        var withContact = entry
        withContact.contact = "wx: abc"
        guard case .object(let page) = FeedbackWire.encode(FeedbackPage(entries: [withContact], nextBefore: 3)),
              case .array(let entries)? = page["feedback"], case .object(let first)? = entries.first else {
            Issue.record("unexpected shape")
            return
        }
        #expect(page["next_before"] == 3)
        #expect(first["contact"] == "wx: abc")
    }

    // MARK: Profile edits

    private func arguments(_ value: JSONValue) throws(DomainError) -> Arguments { try Arguments(value) }

    static let badProfileEdits: [(JSONValue, String)] = [
        (["nick": "x"], "nick"),
        (["gender": "other"], "gender"),
        (["gender": 1], "gender"),
        (["nickname": 5], "nickname"),
        (["avatar_url": .string(String(repeating: "a", count: 2049))], "avatar_url"),
        (["bio": .string(String(repeating: "b", count: 2001))], "bio"),
    ]

    @Test func profileUpdateReadsOnlyTheFieldsGiven() throws {
        let update = try UserWire.decodeProfileUpdate(try arguments(["nickname": "小明", "gender": "female", "dorm": ""]))
        #expect(update == ProfileUpdate(nickname: "小明", gender: .female, dorm: ""))
        #expect(try UserWire.decodeProfileUpdate(try arguments([:])) == ProfileUpdate())
        #expect(try UserWire.decodeProfileUpdate(try arguments(["bio": .null])) == ProfileUpdate())
    }

    @Test(arguments: badProfileEdits)
    func profileUpdateRefusesBadShapesNamingTheField(value: JSONValue, field: String) {
        do throws(DomainError) {
            _ = try UserWire.decodeProfileUpdate(try arguments(value))
            Issue.record("expected \(value) to be refused")
        } catch {
            #expect(error.code == .invalidField)
            #expect(error.field == field)
        }
    }

    @Test func checkedProfileUpdatesNameTheFirstBadFieldOfTheTableAndComeBackTrimmed() throws {
        func field(_ value: JSONValue, campuses: [String] = []) -> String? {
            do throws(DomainError) {
                _ = try UserWire.decodeProfileUpdate(try arguments(value), campuses: campuses)
                return nil
            } catch {
                return error.field
            }
        }
        #expect(field(["nickname": "", "gender": "robot"]) == "nickname")
        #expect(field(["avatar_url": "ftp://x", "bio": 7]) == "avatar_url")
        #expect(field(["gender": "robot", "campus": 5]) == "gender")
        #expect(field(["campus": "East", "dorm": 3], campuses: ["North"]) == "campus")
        #expect(field(["campus": "East"]) == nil, "no list: any short name")
        let edit = try UserWire.decodeProfileUpdate(try arguments(["nickname": "  小明 ", "campus": " North "]), campuses: ["North"])
        #expect(edit == ProfileUpdate(nickname: "小明", campus: "North"))
    }

    // MARK: Users

    @Test func publicViewLeavesOutPrivateFields() {
        let account = UserAccount(id: UserID(4), phone: PhoneNumber(rawValue: "+8613800138000"), passwordHash: nil,
                                  profile: Profile(nickname: "n", campus: "North"), verification: nil,
                                  registeredAt: Timestamp(rawValue: 1), sessions: [])
        let publicView = UserWire.encode(UserView(account: account, isFull: false, isAdministrator: true))
        #expect(publicView == ["id": 4, "nickname": "n", "gender": "undisclosed", "is_verified_runner": false,
                               "registered_at": 1, "campus": "North"])
        guard case .object(let full) = UserWire.encode(UserView(account: account, isFull: true, isAdministrator: true)) else {
            return
        }
        #expect(full["phone"] == "+8613800138000")
        #expect(full["has_password"] == false)
        #expect(full["is_administrator"] == true)
    }
}
