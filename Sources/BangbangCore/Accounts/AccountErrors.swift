// Error codes of the accounts part. They go on the wire unchanged (protocol/ lists them).

extension ErrorCode {
    /// The phone number already belongs to another account.
    public static let phoneTaken = ErrorCode("phone_taken")
    /// Phone or password wrong. Deliberately the same for an unknown phone, an account without a
    /// password and a wrong password, so the answer never reveals whether an account exists.
    public static let invalidCredentials = ErrorCode("invalid_credentials")
    /// The SMS code does not match; the message says how many tries remain.
    public static let codeIncorrect = ErrorCode("code_incorrect")
    /// No usable SMS code: never requested, expired, already used, or killed by wrong tries.
    public static let codeExpired = ErrorCode("code_expired")
    /// The token is missing, malformed, forged or names no session.
    public static let unauthenticated = ErrorCode("unauthenticated")
    /// The session outlived its lifetime; log in again.
    public static let sessionExpired = ErrorCode("session_expired")
    /// The session was logged out.
    public static let sessionRevoked = ErrorCode("session_revoked")
    /// Setting a first password when one is already set; use change password instead.
    public static let passwordAlreadySet = ErrorCode("password_already_set")
    /// Changing a password on an account that has none; set one first.
    public static let passwordNotSet = ErrorCode("password_not_set")
    /// A runner verification cannot be submitted now: one is pending or already approved.
    public static let verificationInProgress = ErrorCode("verification_in_progress")
    /// An administrator decision on a verification that is not pending.
    public static let verificationNotPending = ErrorCode("verification_not_pending")
    /// Granting administration to an administrator, or revoking it from someone who holds no grant.
    public static let administratorUnchanged = ErrorCode("administrator_unchanged")
}
