// An object store bucket on JetStream: blobs too large for one message, as chunks
// (https://github.com/nats-io/nats-architecture-and-design/blob/main/adr/ADR-20.md).
//
// The stream `OBJ_<bucket>` holds, per object, its chunks on `$O.<bucket>.C.<nuid>` (a fresh
// random id per version) and one metadata message on `$O.<bucket>.M.<base64url(name)>` that
// names the chunks' nuid, their count, the size and a SHA-256 digest. The metadata is written
// last, with `Nats-Rollup: sub` so only the newest stays: a reader sees either the old
// version or the new one, never a mix, and a put that dies halfway leaves only unreferenced
// chunks, purged by the next put of that name. Reading checks count, size and digest.
import JSON
import Crypto
import NATSProtocol

public struct ObjectStore: Sendable {
    public let name: String
    public let jetStream: JetStream

    public var streamName: String { Self.streamName(ofBucket: name) }

    /// The stream that holds bucket `name`.
    public static func streamName(ofBucket name: String) -> String { "OBJ_" + name }

    /// Chunk size. 128 KiB, ADR-20's default: well under the server's 1 MiB `max_payload`.
    public static let defaultChunkSize = 128 * 1024
    /// Chunk publishes in flight at once during a put.
    static let publishWindow = 8

    /// Creates the bucket's stream, or finds it (as it is: see `JetStream.ensureStream`).
    public static func create(_ name: String, in jetStream: JetStream, replicas: Int = 1) async throws(NATSClientError) -> ObjectStore {
        guard KeyValueBucket.isValidBucketName(name) else { throw .invalidCommand(.invalidSubject(name)) }
        var stream = StreamConfiguration(name: "OBJ_" + name, subjects: ["$O.\(name).C.>", "$O.\(name).M.>"])
        stream.replicas = replicas
        stream.allowsRollup = true
        stream.discard = .new
        stream.allowsDirect = true
        _ = try await jetStream.ensureStream(stream)
        return ObjectStore(name: name, jetStream: jetStream)
    }

    init(name: String, jetStream: JetStream) {
        self.name = name
        self.jetStream = jetStream
    }

    /// Stores `data` as object `objectName`, replacing any earlier version once it is whole.
    @discardableResult
    public func put(_ objectName: String, _ data: [UInt8], chunkSize: Int = defaultChunkSize) async throws(NATSClientError) -> ObjectInfo {
        try await put(objectName, data, ifRevision: nil, chunkSize: chunkSize)
    }

    /// `put`, only if the object's metadata is still at `revision` (`ObjectInfo.revision`; 0:
    /// there is no object) when the new metadata is written, so a writer that lost its turn
    /// cannot replace what a later one stored. Otherwise throws `.jetStream(e)` with
    /// `e.isWrongLastSequence`, and the chunks it wrote are purged. The check is the stream's
    /// `Nats-Expected-Last-Subject-Sequence` on the metadata's subject: it holds against a write
    /// made before, not against one still being replicated at the same moment (nats-server
    /// issue 4320, fixed in 2.9.21; see `KeyValueBucket.write`), which is enough to keep out a
    /// writer that comes late.
    public func put(_ objectName: String, _ data: [UInt8], ifRevision revision: UInt64?,
                    chunkSize: Int = defaultChunkSize) async throws(NATSClientError) -> ObjectInfo {
        precondition(chunkSize > 0, "chunks hold at least one byte")
        let previous = try await info(objectName)
        if let revision, (previous?.revision ?? 0) != revision {
            throw .jetStream(JetStreamError(code: 400, errorCode: JetStreamError.wrongLastSequence,
                                            text: "wrong last sequence: \(previous?.revision ?? 0)"))
        }
        let nuid = InboxName.random()
        let chunkSubject = "$O.\(name).C.\(nuid)"
        let chunkCount = (data.count + chunkSize - 1) / chunkSize
        do {
            try await publishChunks(data, chunkSize: chunkSize, count: chunkCount, subject: chunkSubject)
        } catch {
            _ = try? await jetStream.purgeStream(streamName, subject: chunkSubject)
            throw error
        }
        var info = ObjectInfo(name: objectName, bucket: name, nuid: nuid, size: data.count, chunks: chunkCount,
                              digest: "SHA-256=" + Self.paddedBase64URL(Digest.sha256(data)), isDeleted: false)
        var headers = NATSHeaders()
        headers.append("Nats-Rollup", "sub")
        do {
            info.revision = try await jetStream.publish(metaSubject(objectName), payload: JSONBody.encode(info.json(chunkSize: chunkSize)),
                                                        options: PublishOptions(expectedLastSubjectSequence: revision),
                                                        headers: headers).sequence
        } catch {
            _ = try? await jetStream.purgeStream(streamName, subject: chunkSubject)
            throw error
        }
        if let previous, previous.nuid != nuid {
            _ = try? await jetStream.purgeStream(streamName, subject: "$O.\(name).C.\(previous.nuid)")
        }
        return info
    }

    /// Publishes the chunks in order with a window of acknowledgements in flight, and checks
    /// that the stream stored them in that order.
    private func publishChunks(_ data: [UInt8], chunkSize: Int, count: Int, subject: String) async throws(NATSClientError) {
        var inFlight: [PendingAcknowledgement] = []
        var head = 0
        var lastSequence: UInt64 = 0
        func awaitOldest() async throws(NATSClientError) {
            let ack = try await inFlight[head].acknowledgement()
            head += 1
            guard ack.sequence > lastSequence else { throw .jetStream(.malformed("object chunks stored out of order")) }
            lastSequence = ack.sequence
        }
        inFlight.reserveCapacity(count)
        for index in 0..<count {
            if inFlight.count - head >= Self.publishWindow { try await awaitOldest() }
            let chunk = Array(data[(index * chunkSize)..<min(data.count, (index + 1) * chunkSize)])
            inFlight.append(try jetStream.startPublish(subject, payload: chunk))
        }
        while head < inFlight.count { try await awaitOldest() }
    }

    /// The object, or nil when there is none (or it was deleted). Throws when its chunks are
    /// missing or do not match the recorded size and digest.
    public func get(_ objectName: String) async throws(NATSClientError) -> [UInt8]? {
        try await object(objectName)?.data
    }

    /// `get`, with the metadata of the version read (its revision, for a conditional `put`).
    public func object(_ objectName: String) async throws(NATSClientError) -> (info: ObjectInfo, data: [UInt8])? {
        guard let info = try await info(objectName), !info.isDeleted else { return nil }
        var data: [UInt8] = []
        data.reserveCapacity(info.size)
        var chunks = 0
        // Chunk by chunk from the stream's leader (`next_by_subj`), with no consumer: reading a
        // snapshot is what a node taking a partition over does first (see ensureStream).
        let chunkSubject = "$O.\(name).C.\(info.nuid)"
        var next: UInt64 = 1
        while chunks < info.chunks {
            let chunk: StoredMessage
            do {
                chunk = try await jetStream.nextMessage(in: streamName, subject: chunkSubject, from: next)
            } catch .jetStream(let error) where error.errorCode == JetStreamError.noMessageFound {
                break
            }
            data.append(contentsOf: chunk.payload)
            chunks += 1
            next = chunk.sequence + 1
        }
        guard chunks == info.chunks, data.count == info.size else {
            throw .jetStream(.malformed("object \(objectName): \(chunks) of \(info.chunks) chunks, \(data.count) of \(info.size) bytes"))
        }
        guard info.digest == "SHA-256=" + Self.paddedBase64URL(Digest.sha256(data)) else {
            throw .jetStream(.malformed("object \(objectName): digest mismatch"))
        }
        return (info, data)
    }

    /// The object's metadata, deleted ones included; nil when it never existed.
    public func info(_ objectName: String) async throws(NATSClientError) -> ObjectInfo? {
        let stored: StoredMessage
        do {
            stored = try await jetStream.lastMessage(in: streamName, subject: metaSubject(objectName))
        } catch .jetStream(let error) where error.errorCode == JetStreamError.noMessageFound {
            return nil
        }
        guard let value = try? JSONParser.parse(stored.payload), var info = ObjectInfo(value) else {
            throw .jetStream(.malformed("object metadata that does not parse"))
        }
        info.revision = stored.sequence
        return info
    }

    /// Marks the object deleted and purges its chunks.
    public func delete(_ objectName: String) async throws(NATSClientError) {
        guard let info = try await info(objectName), !info.isDeleted else { return }
        let tombstone = ObjectInfo(name: objectName, bucket: name, nuid: info.nuid, size: 0, chunks: 0, digest: "", isDeleted: true)
        var headers = NATSHeaders()
        headers.append("Nats-Rollup", "sub")
        _ = try await jetStream.publish(metaSubject(objectName), payload: JSONBody.encode(tombstone.json(chunkSize: 0)),
                                        headers: headers)
        try await jetStream.purgeStream(streamName, subject: "$O.\(name).C.\(info.nuid)")
    }

    private func metaSubject(_ objectName: String) -> String {
        "$O.\(name).M." + Self.paddedBase64URL(Array(objectName.utf8))
    }

    /// URL-safe base64 with padding, as ADR-20 encodes names and digests.
    static func paddedBase64URL(_ bytes: [UInt8]) -> String {
        var text = Base64.encode(bytes, urlSafe: true)
        while text.utf8.count % 4 != 0 { text.append("=") }
        return text
    }
}

/// An object's metadata record.
public struct ObjectInfo: Sendable, Equatable {
    public var name: String
    public var bucket: String
    /// Names the subject of this version's chunks.
    public var nuid: String
    public var size: Int
    public var chunks: Int
    /// `SHA-256=<base64url>` of the whole object.
    public var digest: String
    public var isDeleted: Bool
    /// The stream sequence of this version's metadata: what a conditional `put` expects.
    public var revision: UInt64 = 0

    init(name: String, bucket: String, nuid: String, size: Int, chunks: Int, digest: String, isDeleted: Bool) {
        self.name = name
        self.bucket = bucket
        self.nuid = nuid
        self.size = size
        self.chunks = chunks
        self.digest = digest
        self.isDeleted = isDeleted
    }

    init?(_ value: JSONValue) {
        guard let name = value.string("name"), let nuid = value.string("nuid") else { return nil }
        self.name = name
        bucket = value.string("bucket") ?? ""
        self.nuid = nuid
        size = Int(value.integer("size") ?? 0)
        chunks = Int(value.integer("chunks") ?? 0)
        digest = value.string("digest") ?? ""
        isDeleted = value.bool("deleted")
    }

    func json(chunkSize: Int) -> [String: JSONValue] {
        var members: [String: JSONValue] = [
            "name": .string(name), "bucket": .string(bucket), "nuid": .string(nuid),
            "size": .integer(Int64(size)), "chunks": .integer(Int64(chunks)), "digest": .string(digest),
        ]
        if chunkSize > 0 { members["options"] = .object(["max_chunk_size": .integer(Int64(chunkSize))]) }
        if isDeleted { members["deleted"] = .bool(true) }
        return members
    }
}
