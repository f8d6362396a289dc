import Testing
@testable import BangbangCore

@Suite struct ProfileTests {
    func update(_ update: ProfileUpdate, policy: AccountPolicy = AccountPolicy()) throws -> Profile {
        var harness = AccountHarness(policy: policy)
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideProfileUpdate(user: user, update: update, now: $1) }
        return try #require(harness.store.state.accounts[user]?.profile)
    }

    func expectRefused(_ update: ProfileUpdate, field: String, policy: AccountPolicy = AccountPolicy(),
                       sourceLocation: SourceLocation = #_sourceLocation) {
        expectAccountError(.invalidField, field: field, sourceLocation: sourceLocation) { try self.update(update, policy: policy) }
    }

    @Test func nicknameAtTwentyCharactersIsAccepted() throws {
        #expect(try update(.init(nickname: String(repeating: "帮", count: 20))).nickname.count == 20)
        #expect(try update(.init(nickname: String(repeating: "👨‍👩‍👧", count: 20))).nickname.count == 20)
        #expect(try update(.init(nickname: "  小明  ")).nickname == "小明")
    }

    @Test func nicknameRulesAreEnforced() {
        expectRefused(.init(nickname: String(repeating: "a", count: 21)), field: "nickname")
        expectRefused(.init(nickname: ""), field: "nickname")
        expectRefused(.init(nickname: "   "), field: "nickname")
        expectRefused(.init(nickname: "a\u{0}b"), field: "nickname")
        expectRefused(.init(nickname: "a\nb"), field: "nickname")
        expectRefused(.init(nickname: "a\u{1B}[31mb"), field: "nickname")
        expectRefused(.init(nickname: "a\u{2028}b"), field: "nickname")
    }

    @Test func avatarURLRules() throws {
        let base = "https://cdn.example.com/"
        let longest = base + String(repeating: "a", count: 512 - base.count)
        #expect(try update(.init(avatarURL: longest)).avatarURL == longest)
        #expect(try update(.init(avatarURL: "http://example.com")).avatarURL == "http://example.com")
        #expect(try update(.init(avatarURL: "HTTPS://Example.com/a.png")).avatarURL == "HTTPS://Example.com/a.png")
        #expect(try update(.init(avatarURL: "")).avatarURL == nil)
        for bad in [longest + "a", "ftp://example.com/a.png", "javascript:alert(1)", "https://", "https:///path",
                    "https://exa mple.com", "example.com/a.png"] {
            expectRefused(.init(avatarURL: bad), field: "avatar_url")
        }
    }

    @Test func genderIsOneOfThree() throws {
        #expect(try update(.init(gender: .female)).gender == .female)
        #expect(Gender(rawValue: "other") == nil)
        #expect(Set(Gender.allCases.map(\.rawValue)) == ["male", "female", "undisclosed"])
    }

    @Test func campusMustBeConfiguredWhenAListExists() throws {
        let policy = AccountPolicy(campuses: ["东校区", "West Campus"])
        #expect(try update(.init(campus: "West Campus"), policy: policy).campus == "West Campus")
        expectRefused(.init(campus: "North Campus"), field: "campus", policy: policy)
        #expect(try update(.init(campus: ""), policy: policy).campus == nil)
    }

    @Test func campusIsFreeTextUpToFortyWithoutAList() throws {
        #expect(try update(.init(campus: String(repeating: "c", count: 40))).campus?.count == 40)
        expectRefused(.init(campus: String(repeating: "c", count: 41)), field: "campus")
    }

    @Test func dormAndBioLimits() throws {
        #expect(try update(.init(dorm: String(repeating: "楼", count: 40))).dorm?.count == 40)
        expectRefused(.init(dorm: String(repeating: "楼", count: 41)), field: "dorm")
        expectRefused(.init(dorm: "3\n101"), field: "dorm")
        #expect(try update(.init(bio: String(repeating: "b", count: 200))).bio?.count == 200)
        #expect(try update(.init(bio: "line one\nline two")).bio == "line one\nline two")
        expectRefused(.init(bio: String(repeating: "b", count: 201)), field: "bio")
        expectRefused(.init(bio: "tab\there"), field: "bio")
    }

    @Test func updatesArePartial() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        try harness.decide { try $0.decideProfileUpdate(user: user, update: .init(nickname: "小明", dorm: "3-101"),
                                                        now: $1) }
        let event = try harness.store.decideProfileUpdate(user: user, update: .init(bio: "hi"), now: harness.now)
        harness.commit(event)
        #expect(event.recipients == [user])
        #expect(harness.store.state.accounts[user]?.profile
                == Profile(nickname: "小明", gender: .undisclosed, dorm: "3-101", bio: "hi"))
        try harness.decide { try $0.decideProfileUpdate(user: user, update: .init(dorm: ""), now: $1) }
        #expect(harness.store.state.accounts[user]?.profile.dorm == nil)
        #expect(harness.store.state.accounts[user]?.profile.nickname == "小明")
    }

    @Test func oneBadFieldRefusesTheWholeUpdate() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        expectAccountError(.invalidField, field: "bio") {
            try harness.store.decideProfileUpdate(user: user, update: .init(nickname: "ok", bio: String(repeating: "b", count: 201)),
                                                  now: harness.now)
        }
        #expect(harness.store.state.accounts[user]?.profile.nickname == "用户1")
    }

    @Test func emptyUpdateAndUnknownUserAreRefused() throws {
        var harness = AccountHarness()
        let user = try harness.logIn("13800138000").user
        expectAccountError(.invalidField, field: "profile") {
            try harness.store.decideProfileUpdate(user: user, update: .init(), now: harness.now)
        }
        expectAccountError(.notFound) {
            try harness.store.decideProfileUpdate(user: UserID(99), update: .init(nickname: "x"), now: harness.now)
        }
    }
}
