// `auth.admin_secret` as every session takes it, on the owner (AuthOperations) and on a node
// running its clients' sessions (NodeSession): the one field, the loopback rule, the secret read
// and compared off the loops, and what each outcome counts and logs. The secret itself is never
// logged (AdminSecret.swift).
import BangbangCore
import BangbangProtocol
import Dispatch
import Forwarding

package enum AdminSecretLogin {
    /// The secret the client typed.
    package static func candidate(_ arguments: Arguments) throws(DomainError) -> String {
        try arguments.allowOnly(["secret"])
        return try arguments.string("secret", maxLength: 128)
    }

    /// `forbidden` unless the client is on the server's own machine (through a proxy, only when
    /// the real client is).
    package static func requireLoopback(_ origin: ClientOrigin?, connectionID: UInt64, metrics: ServerMetrics,
                                logger: Logger) throws(DomainError) {
        guard let origin, origin.isLoopback else {
            metrics.adminSecretLogins.increment(label: "not_loopback")
            logger.warning("admin_secret_refused", ["connection.id": connectionID, "reason": "not_loopback",
                                                    "remote": origin?.description ?? "unknown"])
            throw DomainError(.forbidden, "the admin secret is accepted only from the server's own machine (loopback)")
        }
    }

    /// Compares `candidate` with the secret of the server owning `dataDirectory`, read off the
    /// loops; `completion` (any thread) is told whether it matched, already counted and logged.
    package static func check(_ candidate: String, dataDirectory: String, connectionID: UInt64, metrics: ServerMetrics,
                      logger: Logger, completion: @escaping @Sendable (Result<Void, DomainError>) -> Void) {
        DispatchQueue.global().async {
            guard AdminSecret.read(from: dataDirectory).map({ AdminSecret.matches(candidate, $0) }) == true else {
                metrics.adminSecretLogins.increment(label: "wrong_secret")
                logger.warning("admin_secret_refused", ["connection.id": connectionID, "reason": "wrong_secret"])
                return completion(.failure(DomainError(.unauthenticated, "wrong admin secret")))
            }
            metrics.adminSecretLogins.increment(label: "ok")
            logger.info("admin_logged_in", ["connection.id": connectionID, "as": "built_in_administrator"])
            completion(.success(()))
        }
    }

    /// The reply's data once logged in.
    package static let loggedIn: JSONValue = ["administrator": .integer(Int64(BuiltInAdministrator.id.rawValue))]
}
