// The personal centre: profile.*, runner verification (runner.*) and feedback.submit
// (protocol/operations-accounts.md). Every one of them touches only the accounts store, so each
// is one visit to the accounts queue: a query replies there, a command is decided, applied and
// committed there and replies once durable (`AuthOperations.commit`). Fields are checked with
// the domain's own rules as they are read, in the order of each operation's table, before the
// visit (protocol/README.md, "Error precedence"); the domain checks them again when it decides.
import BangbangCore
import BangbangProtocol

package enum ProfileOperations {
    package static let all: [Operation] = [get, update, changePhone, submitVerification, verification, submitFeedback]

    package static let get = Operation("profile.get") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["user_id"])
        let viewer = context.user
        let subject = try arguments.optionalInteger("user_id", in: 1...Int64.max).map { UserID(rawValue: UInt64($0)) } ?? viewer
        context.app.accounts.perform { owner in
            do throws(DomainError) {
                context.succeed(["user": UserWire.encode(try owner.store.user(subject, viewer: viewer))])
            } catch {
                context.fail(error)
            }
        }
    }

    static let update = Operation("profile.update") { context, arguments throws(DomainError) in
        let edit = try UserWire.decodeProfileUpdate(arguments, campuses: context.app.configuration.campuses)
        let user = context.user
        let app = context.app
        app.accounts.perform { owner in
            do throws(DomainError) {
                let now = app.clock()
                let event = try owner.store.decideProfileUpdate(user: user, update: edit, now: now)
                AuthOperations.commit(event, on: owner, at: now, context: context, reply: myView(user))
            } catch {
                context.fail(error)
            }
        }
    }

    package static let changePhone = Operation("profile.change_phone") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["phone", "code"])
        let phone = try arguments.string("phone", maxLength: 32)
        _ = try PhoneNumber(parsing: phone)
        let code = try arguments.string("code", maxLength: 16)
        let user = context.user
        let app = context.app
        app.accounts.perform { owner in
            let now = app.clock()
            let decision = owner.store.decidePhoneChange(user: user, newPhone: phone, code: code, now: now)
            for event in decision.throttle { owner.store.apply(event) }
            switch decision.outcome {
            case .failure(let error): context.fail(error)
            case .success(let event):
                AuthOperations.commit(event, on: owner, at: now, context: context, reply: myView(user))
            }
        }
    }

    static let submitVerification = Operation("runner.submit_verification") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["real_name", "student_id", "school"])
        let realName = try RunnerVerification.validatedRealName(try arguments.string("real_name", maxLength: 200))
        let studentID = try RunnerVerification.validatedStudentID(try arguments.string("student_id", maxLength: 200))
        let school = try RunnerVerification.validatedSchool(try arguments.string("school", maxLength: 200),
                                                            campuses: context.app.configuration.campuses)
        let user = context.user
        let app = context.app
        app.accounts.perform { owner in
            do throws(DomainError) {
                let now = app.clock()
                let event = try owner.store.decideVerificationSubmission(user: user, realName: realName, studentID: studentID,
                                                                            school: school, now: now)
                AuthOperations.commit(event, on: owner, at: now, context: context) { store in
                    verificationReply(store.state.accounts[user]?.verification)
                }
            } catch {
                context.fail(error)
            }
        }
    }

    static let verification = Operation("runner.verification") { context, arguments throws(DomainError) in
        try arguments.allowOnly([])
        let user = context.user
        context.app.accounts.perform { owner in
            context.succeed(verificationReply(owner.store.state.accounts[user]?.verification))
        }
    }

    static let submitFeedback = Operation("feedback.submit") { context, arguments throws(DomainError) in
        try arguments.allowOnly(["text", "contact"])
        let text = try FeedbackEntry.validatedText(try arguments.string("text", maxLength: 2000))
        let contact = try arguments.optionalString("contact", maxLength: 200)
        if let contact { _ = try FeedbackEntry.validatedContact(contact) }
        let user = context.user
        let app = context.app
        app.accounts.perform { owner in
            do throws(DomainError) {
                let now = app.clock()
                let event = try owner.store.decideFeedback(user: user, text: text, contact: contact, now: now)
                guard case .feedbackSubmitted(let entry) = event else {
                    fatalError("internal inconsistency in feedback.submit: decideFeedback made \(event)")
                }
                AuthOperations.commit(event, on: owner, at: now, context: context) { _ in
                    ["feedback_id": .integer(Int64(entry.id))]
                }
            } catch {
                context.fail(error)
            }
        }
    }

    // MARK: Helpers

    /// The reply `{"user": …}`: `user` as they see themself.
    package static func myView(_ user: UserID) -> (AccountStore) -> JSONValue {
        { store in
            do {
                return ["user": UserWire.encode(try store.user(user, viewer: user))]
            } catch {
                fatalError("internal inconsistency in the personal centre: user \(user) vanished after a change")
            }
        }
    }

    static func verificationReply(_ verification: RunnerVerification?) -> JSONValue {
        ["verification": verification.map(UserWire.encode) ?? .null]
    }
}
