// Logging clients in (SMS code on a --dev server, or `auth.resume` with a saved token),
// runner verification requests, and approvals by the administrator.
import BangbangProtocol

/// Why a protocol step failed, for the failure samples.
func describe(_ reply: Reply, _ operation: String) -> String {
    "\(operation) failed: \(reply.errorCode ?? "?") \(reply.errorMessage ?? "")"
}

extension ProtocolWorker {
    /// Logs `client` in as its participant: `auth.resume` when a token is known, otherwise an
    /// SMS code (the reply of a --dev server carries it) and `auth.login_code`.
    func logIn(_ client: WebSocketClient, completion: @escaping (Bool) -> Void) {
        guard let participant = participants[client.tag] else {
            fatalError("internal inconsistency in ProtocolWorker: client \(client.tag) has no participant")
        }
        if let token = participant.token {
            request(client, "auth.resume", ["token": .string(token), "last_seq": .integer(participant.lastSequence)]) { reply in
                guard reply.isSuccess else {
                    self.recordFailure(describe(reply, "auth.resume"))
                    completion(false)
                    return
                }
                if case .integer(let id)? = reply.data["user"]?["id"] { self.participants[client.tag]?.userID = id }
                completion(true)
            }
            return
        }
        let phone = participant.phone
        request(client, "auth.request_code", ["phone": .string(phone)]) { reply in
            guard reply.isSuccess else {
                self.recordFailure(describe(reply, "auth.request_code")
                                   + (reply.errorCode == "rate_limited" ? " (start the server with --sms-per-ip-hourly 0)" : ""))
                completion(false)
                return
            }
            guard case .string(let code)? = reply.data["dev_code"] else {
                self.recordFailure("auth.request_code replied without dev_code: the server must run with --dev")
                completion(false)
                return
            }
            self.request(client, "auth.login_code",
                         ["phone": .string(phone), "code": .string(code), "device": "loadtest"]) { reply in
                guard reply.isSuccess, case .string(let token)? = reply.data["token"],
                      case .integer(let id)? = reply.data["user"]?["id"] else {
                    self.recordFailure(describe(reply, "auth.login_code"))
                    completion(false)
                    return
                }
                self.participants[client.tag]?.token = token
                self.participants[client.tag]?.userID = id
                if case .integer(let sequence)? = reply.data["seq"] { self.participants[client.tag]?.lastSequence = sequence }
                completion(true)
            }
        }
    }

    /// Asks for runner verification; an account that is already verified counts as done.
    func submitVerification(_ client: WebSocketClient, completion: @escaping (Bool) -> Void) {
        let userID = participants[client.tag]?.userID ?? 0
        request(client, "runner.submit_verification",
                ["real_name": "Load Test", "student_id": .string("LT\(userID)"), "school": "North"]) { reply in
            if !reply.isSuccess { self.recordFailure(describe(reply, "runner.submit_verification")) }
            completion(reply.isSuccess)
        }
    }

    /// The administrator approves `userID`'s verification.
    func approve(_ userID: Int64, by administrator: WebSocketClient, completion: @escaping (Bool) -> Void) {
        request(administrator, "admin.decide_verification", ["user_id": .integer(userID), "decision": "approve"]) { reply in
            if !reply.isSuccess {
                self.recordFailure(describe(reply, "admin.decide_verification")
                                   + (reply.errorCode == "forbidden" ? " (is --admin-phone the server's administrator?)" : ""))
            }
            completion(reply.isSuccess)
        }
    }
}
