// Runner verification and administrator grants.

extension AccountStore {
    /// Submits (or, after a rejection, resubmits) an application to become a runner.
    public func decideVerificationSubmission(user: UserID, realName: String, studentID: String, school: String,
                                             now: Timestamp) throws(DomainError) -> AccountEvent {
        let name = try RunnerVerification.validatedRealName(realName)
        let number = try RunnerVerification.validatedStudentID(studentID)
        let schoolName = try RunnerVerification.validatedSchool(school, campuses: policy.campuses)
        let account = try account(user)
        switch account.verification?.status {
        case .pending:
            throw DomainError(.verificationInProgress, "Your verification is being reviewed.")
        case .approved:
            throw DomainError(.verificationInProgress, "You are already a verified runner.")
        case .rejected, nil:
            break
        }
        return .verificationSubmitted(.init(user: user, realName: name, studentID: number, school: schoolName, at: now))
    }

    /// An administrator approves a pending application; the applicant is told live.
    public func decideVerificationApproval(administrator: UserID, user: UserID,
                                           now: Timestamp) throws(DomainError) -> AccountEvent {
        try requirePendingVerification(administrator: administrator, user: user)
        return .verificationDecided(.init(user: user, administrator: administrator, isApproved: true, reason: nil, at: now))
    }

    /// An administrator rejects a pending application with a reason the applicant will read.
    public func decideVerificationRejection(administrator: UserID, user: UserID, reason: String,
                                            now: Timestamp) throws(DomainError) -> AccountEvent {
        let text = try RunnerVerification.validatedRejectionReason(reason)
        try requirePendingVerification(administrator: administrator, user: user)
        return .verificationDecided(.init(user: user, administrator: administrator, isApproved: false,
                                          reason: text, at: now))
    }

    private func requirePendingVerification(administrator: UserID, user: UserID) throws(DomainError) {
        try requireAdministrator(administrator)
        let account = try account(user)
        guard account.verification?.status == .pending else {
            throw DomainError(.verificationNotPending, "This user has no verification waiting for review.")
        }
    }

    /// Whether `user` may accept orders: an approved runner verification.
    public func canRunErrands(_ user: UserID) -> Bool {
        state.record(user)?.verification?.status == .approved
    }

    /// Applications waiting for review, oldest first, for administrators.
    public func pendingVerifications(viewer: UserID) throws(DomainError) -> [UserView] {
        try requireAdministrator(viewer)
        return state.accounts.records
            .filter { $0.record.verification?.status == .pending }
            .sorted { ($0.record.verification!.submittedAt, $0.user) < ($1.record.verification!.submittedAt, $1.user) }
            .map { UserView($0.user, $0.record, isFull: true, isAdministrator: isAdministrator($0.user)) }
    }

    /// An administrator grants administration to another user.
    public func decideAdministratorGrant(by administrator: UserID, to user: UserID,
                                         now: Timestamp) throws(DomainError) -> AccountEvent {
        try requireAdministrator(administrator)
        _ = try account(user)
        guard !isAdministrator(user) else {
            throw DomainError(.administratorUnchanged, "This user is already an administrator.")
        }
        return .administratorChanged(.init(user: user, grantedBy: administrator, isAdministrator: true, at: now))
    }

    /// An administrator revokes a grant. Administrators by configured phone cannot be revoked here.
    public func decideAdministratorRevocation(by administrator: UserID, from user: UserID,
                                              now: Timestamp) throws(DomainError) -> AccountEvent {
        try requireAdministrator(administrator)
        let account = try account(user)
        if policy.administratorPhones.contains(account.phone) {
            throw DomainError(.forbidden, "This administrator is set by the server configuration.")
        }
        guard state.grantedAdministrators.contains(user) else {
            throw DomainError(.administratorUnchanged, "This user is not an administrator.")
        }
        return .administratorChanged(.init(user: user, grantedBy: administrator, isAdministrator: false, at: now))
    }
}
