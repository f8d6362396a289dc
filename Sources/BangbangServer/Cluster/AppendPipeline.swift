// The order and fences of a partition owner's appends in flight (docs/scale-out.md, section 3),
// with no I/O: StreamJournal asks it what to publish and tells it what the stream answered.
//
// Each append is published fenced on the sequence the previous one will get
// (`Nats-Expected-Last-Sequence`), so many can be in flight and the stream still stores them in
// the order they were started, or refuses them. A sequence alone does not say whose record is
// last, though: when a stale owner's append N+1 is refused because another node stored N+1, the
// stale owner's N+2, fenced on N+1, would be stored. So every append after the first also names
// the message id of the one before it (`Nats-Expected-Last-Msg-Id`, `followsOwnAppend`): the
// record before it must be this owner's own. The first append after recovery has no own
// predecessor and is fenced on the sequence replayed to, which nobody else can have reached
// unseen. Answers may be seen in any order; completions
// are released in sequence order only, each once every earlier one is known. The first append
// that is not stored at the sequence it was fenced for (refused, timed out, or acknowledged at
// another sequence) fails, and so does every later one, in flight or not yet started: their
// fences are wrong, and the owner's memory holds a change the stream may lack. The pipeline
// then reports the failure once; the owner must stop owning the partition.

struct AppendPipeline<Completion> {
    /// What to do with a new append.
    enum Start {
        /// Publish it fenced on `expected`; it is stored as `sequence` (= expected + 1). With
        /// `followsOwnAppend`, the record at `expected` must also be this owner's own append.
        case publish(expected: UInt64, sequence: UInt64, followsOwnAppend: Bool)
        /// Fail it at once: an earlier append failed, or the journal was closed.
        case refuse
    }

    /// What the stream answered for the append of `sequence`.
    enum Answer {
        /// Acknowledged, stored at `sequence`.
        case stored(at: UInt64)
        /// Refused or unknown (fence failed, timeout, connection lost); the text says which.
        case failed(String)
    }

    /// A completion to run, in order.
    struct Release {
        var completion: Completion
        /// The record's sequence, or nil when it was not stored.
        var sequence: UInt64?
    }

    private struct Entry {
        var sequence: UInt64
        var completion: Completion
        var answer: Answer?
    }

    /// The sequence the last started append will get (the stream's end as this owner sees it).
    private(set) var lastAssigned: UInt64
    /// Whether an append was started since recovery (the record at `lastAssigned` is then ours).
    private var hasStarted = false
    /// Why appends fail now; set by the first failure (or `close`).
    private(set) var failure: String?
    private var inFlight: [Entry] = []
    private var head = 0

    init(after lastSequence: UInt64) {
        lastAssigned = lastSequence
    }

    var inFlightCount: Int { inFlight.count - head }

    mutating func start(_ completion: Completion) -> (Start, Release?) {
        guard failure == nil else { return (.refuse, Release(completion: completion, sequence: nil)) }
        let expected = lastAssigned
        let followsOwnAppend = hasStarted
        hasStarted = true
        lastAssigned += 1
        inFlight.append(Entry(sequence: lastAssigned, completion: completion))
        return (.publish(expected: expected, sequence: lastAssigned, followsOwnAppend: followsOwnAppend), nil)
    }

    /// Records the answer for `sequence`; returns the completions now due, in order, and the
    /// failure when this answer is the first one.
    mutating func answer(_ answer: Answer, for sequence: UInt64) -> (released: [Release], newFailure: String?) {
        let first = head < inFlight.count ? inFlight[head].sequence : lastAssigned + 1
        let index = sequence >= first ? head + Int(sequence - first) : -1
        precondition(inFlight.indices.contains(index) && inFlight[index].sequence == sequence && inFlight[index].answer == nil,
                     "internal inconsistency in AppendPipeline: answer for an append not in flight (\(sequence))")
        inFlight[index].answer = answer
        var released: [Release] = []
        var newFailure: String?
        while head < inFlight.count, let answer = inFlight[head].answer {
            let entry = inFlight[head]
            head += 1
            if failure == nil, case .stored(let stored) = answer, stored == entry.sequence {
                released.append(Release(completion: entry.completion, sequence: stored))
                continue
            }
            if failure == nil {
                switch answer {
                case .stored(let stored): failure = "append \(entry.sequence) was stored as \(stored)"
                case .failed(let why): failure = "append \(entry.sequence) failed: \(why)"
                }
                newFailure = failure
            }
            released.append(Release(completion: entry.completion, sequence: nil))
        }
        if head == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            head = 0
        }
        return (released, newFailure)
    }

    /// Refuses every later append (those in flight still get their answers).
    mutating func close(_ reason: String) {
        if failure == nil { failure = reason }
    }
}

extension AppendPipeline.Release: Sendable where Completion: Sendable {}
