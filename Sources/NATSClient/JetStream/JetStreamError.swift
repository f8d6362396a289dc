// JetStream's refusals, with the error codes the server defines (nats-server's
// server/errors.json; the ones this client reacts to are named here).

/// A JetStream API error: the HTTP-like `code`, the specific `errorCode` (`err_code`) and the
/// server's text. `errorCode` 0 marks an answer this client could not read.
public struct JetStreamError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: Int
    public var errorCode: Int
    public var text: String

    public init(code: Int, errorCode: Int, text: String) {
        self.code = code
        self.errorCode = errorCode
        self.text = text
    }

    /// `Nats-Expected-Last-Sequence` or `-Last-Subject-Sequence` did not match: another
    /// writer appended first. This is the fencing signal.
    public static let wrongLastSequence = 10071
    /// `Nats-Expected-Last-Msg-Id` did not match: the last message is not the one named.
    public static let wrongLastMessageID = 10070
    /// `Nats-Expected-Stream` named another stream.
    public static let streamNotMatch = 10060
    public static let streamNotFound = 10059
    public static let streamNameInUse = 10058
    public static let consumerNotFound = 10014
    public static let noMessageFound = 10037
    /// The cluster has no meta leader (yet, or after losing quorum): retry later.
    public static let clusterNotAvailable = 10008
    /// JetStream's cluster is not ready, or the stream has no leader for a moment.
    public static let streamOffline = 10118

    public var isWrongLastSequence: Bool { errorCode == Self.wrongLastSequence }
    public var isWrongLastMessageID: Bool { errorCode == Self.wrongLastMessageID }

    public var description: String { "JetStream error \(errorCode) (\(code)): \(text)" }

    /// An answer that is not what the API defines.
    static func malformed(_ what: String) -> JetStreamError {
        JetStreamError(code: 0, errorCode: 0, text: "unexpected answer: \(what)")
    }
}
