// The order and fences of a partition owner's appends in flight, with no I/O: StreamJournal asks it
// what to publish and tells it what the stream answered, and when a retry it asked for is due.
//
// Each append is published fenced on the sequence the previous one will get
// (`Nats-Expected-Last-Sequence`), so many can be in flight and the stream still stores them in
// the order they were started, or refuses them. A sequence alone does not say whose record is
// last, though: when a stale owner's append N+1 is refused because another node stored N+1, the
// stale owner's N+2, fenced on N+1, would be stored. So every append after the first also names
// the message id of the one before it (`Nats-Expected-Last-Msg-Id`, `followsOwnAppend`): the
// record before it must be this owner's own. The first append after recovery has no own
// predecessor and is fenced on the sequence replayed to, which nobody else can have reached
// unseen. Answers may be seen in any order; completions are released in sequence order only,
// each once every earlier one is known.
//
// An append whose outcome is unknown (no answer in time, no stream leader for a moment, the
// connection moved to another server) is published again, with the same message id and the
// same fences, after a backoff: the stream stores a message id once within its duplicate window
// and answers a repeat with the first copy's sequence. From the first unknown outcome until every
// append it held up is settled (a retry episode), new appends wait, in order, behind it; each
// round publishes every unsettled append again, once the previous round's answers are all in.
// In an episode a refusal may be this owner's own doing (its predecessor never reached the
// stream), so a refusal ends ownership only when nothing unknown preceded it or it was published
// with every earlier append known stored. The first append that is definitely not stored at its
// sequence (refused so, acknowledged at another sequence, or still unknown when the episode's
// bound runs out) fails, and so does every later one: their fences are wrong, and the owner's
// memory holds a change the stream may lack. The pipeline then reports the failure once; the
// owner must stop owning the partition.

package struct AppendPipeline<Completion> {
    /// What to do with a new append.
    package enum Start {
        /// Publish it fenced on `expected`; it is stored as `sequence` (= expected + 1). With
        /// `followsOwnAppend`, the record at `expected` must also be this owner's own append.
        case publish(expected: UInt64, sequence: UInt64, followsOwnAppend: Bool)
        /// Hold it: earlier appends are being retried, and a later `Step` publishes it; or appends
        /// fail now but earlier ones still await their answers, and a later `Step` releases it,
        /// unstored, right after them.
        case queued
        /// Fail it at once: an earlier append failed, or the journal was closed, and nothing
        /// before it is still to be released.
        case refuse
    }

    /// What the stream answered for the append of `sequence`.
    package enum Answer {
        /// Acknowledged (or acknowledged again as a duplicate), stored at `sequence`.
        case stored(at: UInt64)
        /// Refused by a fence: the stream did not store it; the text says why.
        case failed(String)
        /// No definite answer (timeout, no stream leader, connection lost); may have been stored.
        case unknown(String)
    }

    /// A completion to run, in order.
    package struct Release {
        package var completion: Completion
        /// The record's sequence, or nil when it was not stored.
        package var sequence: UInt64?
    }

    /// An append to put on the wire now, in this order.
    package struct Publish {
        package var expected: UInt64
        package var sequence: UInt64
        package var followsOwnAppend: Bool
        package var completion: Completion

        package init(expected: UInt64, sequence: UInt64, followsOwnAppend: Bool, completion: Completion) {
            self.expected = expected
            self.sequence = sequence
            self.followsOwnAppend = followsOwnAppend
            self.completion = completion
        }
    }

    /// What follows from a call: completions due, the failure when it is new, what to publish
    /// now, and when to call `retry` (nil: not needed).
    package struct Step {
        package var released: [Release] = []
        package var newFailure: String?
        package var publish: [Publish] = []
        package var retryAfter: Duration?
        /// A retry episode began: the first unknown outcome, said for an operator.
        package var retryStarted: String?
        /// The episode ended with every append it held up stored, after this long and this many rounds.
        package var retrySettled: (duration: Duration, rounds: Int)?
    }

    private enum State {
        /// Not on the wire: queued behind a retry, or due to be published again.
        case waiting
        /// Published; `asHead`: every earlier append was known stored at the time.
        case sent(asHead: Bool)
        case answered(Answer, sentAsHead: Bool)
    }

    private struct Entry {
        package var sequence: UInt64
        package var completion: Completion
        package var followsOwnAppend: Bool
        var state: State
        var attempts: Int
    }

    /// How long an episode of unknown outcomes may last before the owner gives up. Fifteen
    /// seconds: nats-server 2.9 elects a stream leader 2 to 5 s after the old one went silent, a
    /// split vote takes another round, and the attempt lost with the old leader waits out its 2 s.
    let retryBound: Duration
    /// The sequence the last started append will get (the stream's end as this owner sees it).
    private(set) var lastAssigned: UInt64
    /// Whether an append was started since recovery (the record at `lastAssigned` is then ours).
    private var hasStarted = false
    /// Why appends fail now; set by the first failure (or `close`).
    package private(set) var failure: String?
    private var inFlight: [Entry] = []
    private var head = 0
    /// When the current retry episode must be over; nil outside one.
    private var episodeDeadline: ContinuousClock.Instant?
    private var episodeStart: ContinuousClock.Instant?
    private var lastUnknown = ""
    private var rounds = 0

    package init(after lastSequence: UInt64, retryBound: Duration = .seconds(15)) {
        lastAssigned = lastSequence
        self.retryBound = retryBound
    }

    package var inFlightCount: Int { inFlight.count - head }

    /// Whether appends are being published again after an unknown outcome.
    var isRetrying: Bool { episodeDeadline != nil }

    package mutating func start(_ completion: Completion) -> (Start, Release?) {
        if failure != nil {
            guard head < inFlight.count else { return (.refuse, Release(completion: completion, sequence: nil)) }
            // Completions stay in sequence order: this refusal waits for those still in flight.
            lastAssigned += 1
            inFlight.append(Entry(sequence: lastAssigned, completion: completion, followsOwnAppend: true,
                                  state: .waiting, attempts: 0))
            return (.queued, nil)
        }
        let expected = lastAssigned
        let followsOwnAppend = hasStarted
        hasStarted = true
        lastAssigned += 1
        let isHead = head == inFlight.count
        let state: State = isRetrying ? .waiting : .sent(asHead: isHead)
        inFlight.append(Entry(sequence: lastAssigned, completion: completion, followsOwnAppend: followsOwnAppend,
                              state: state, attempts: isRetrying ? 0 : 1))
        guard !isRetrying else { return (.queued, nil) }
        return (.publish(expected: expected, sequence: lastAssigned, followsOwnAppend: followsOwnAppend), nil)
    }

    /// Records the answer for `sequence` (published and not yet answered).
    package mutating func answer(_ answer: Answer, for sequence: UInt64, now: ContinuousClock.Instant) -> Step {
        let first = head < inFlight.count ? inFlight[head].sequence : lastAssigned + 1
        let index = sequence >= first ? head + Int(sequence - first) : -1
        guard inFlight.indices.contains(index), inFlight[index].sequence == sequence,
              case .sent(let asHead) = inFlight[index].state else {
            preconditionFailure("internal inconsistency in AppendPipeline: answer for an append not in flight (\(sequence))")
        }
        inFlight[index].state = .answered(answer, sentAsHead: asHead)
        var started: String?
        if case .unknown(let why) = answer, failure == nil {
            lastUnknown = why
            if episodeDeadline == nil {
                episodeDeadline = now + retryBound
                episodeStart = now
                started = "append \(sequence): \(why)"
            }
        }
        var step = settle(now: now)
        step.retryStarted = started
        return step
    }

    /// Publishes every unsettled append again, in order; called when a `Step` asked for it.
    package mutating func retry(now: ContinuousClock.Instant) -> Step {
        guard failure == nil, let deadline = episodeDeadline, !hasSentEntry else { return Step() }
        guard now < deadline else {
            var step = Step()
            fail("append \(inFlight[head].sequence) had no definite answer within \(retryBound): \(lastUnknown)", into: &step)
            settle(into: &step)
            return step
        }
        rounds += 1
        var step = Step()
        markUnsettledWaiting()
        sendWaiting(into: &step)
        return step
    }

    /// Refuses every later append and fails those not on the wire; those in flight still get
    /// their answers, and what is refused after them is released after them.
    @discardableResult
    package mutating func close(_ reason: String) -> [Release] {
        if failure == nil { failure = reason }
        endEpisode()
        var step = Step()
        settle(into: &step)
        return step.released
    }

    private var hasSentEntry: Bool {
        inFlight[head...].contains { if case .sent = $0.state { true } else { false } }
    }

    private mutating func settle(now: ContinuousClock.Instant) -> Step {
        var step = Step()
        let (start, roundsMade) = (episodeStart, rounds)
        settle(into: &step)
        if let start, episodeStart == nil, failure == nil { step.retrySettled = (now - start, roundsMade) }
        guard failure == nil, isRetrying, head < inFlight.count, !hasSentEntry else { return step }
        if inFlight[head...].allSatisfy({ $0.attempts == 0 }) {
            // Everything that was unknown is settled; what waited behind it goes out now.
            if let start { step.retrySettled = (now - start, roundsMade) }
            endEpisode()
            sendWaiting(into: &step)
        } else {
            step.retryAfter = .milliseconds(min(500, 50 << min(rounds, 4)))
        }
        return step
    }

    /// Releases what is due at the head, in order, and turns answers that call for a retry into
    /// waiting entries.
    private mutating func settle(into step: inout Step) {
        while head < inFlight.count {
            let entry = inFlight[head]
            if failure != nil {
                if case .sent = entry.state { break }
                step.released.append(Release(completion: entry.completion, sequence: nil))
                head += 1
                continue
            }
            guard case .answered(let answer, let sentAsHead) = entry.state else { break }
            switch answer {
            case .stored(let stored) where stored == entry.sequence:
                step.released.append(Release(completion: entry.completion, sequence: stored))
                head += 1
                continue
            case .stored(let stored):
                fail("append \(entry.sequence) was stored as \(stored)", into: &step)
            case .failed(let why) where !isRetrying || sentAsHead:
                fail("append \(entry.sequence) failed: \(why)", into: &step)
            case .failed, .unknown:
                markUnsettledWaiting()
                return
            }
        }
        if head == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            head = 0
            endEpisode()
        }
    }

    /// In an episode every append not known stored is published again in the next round.
    private mutating func markUnsettledWaiting() {
        for index in head..<inFlight.count {
            switch inFlight[index].state {
            case .answered(.stored(let stored), _) where stored == inFlight[index].sequence: continue
            case .answered: inFlight[index].state = .waiting
            case .sent, .waiting: continue
            }
        }
    }

    private mutating func sendWaiting(into step: inout Step) {
        for index in head..<inFlight.count {
            guard case .waiting = inFlight[index].state else { continue }
            let entry = inFlight[index]
            inFlight[index].state = .sent(asHead: index == head)
            inFlight[index].attempts += 1
            step.publish.append(Publish(expected: entry.sequence - 1, sequence: entry.sequence,
                                        followsOwnAppend: entry.followsOwnAppend, completion: entry.completion))
        }
    }

    private mutating func fail(_ why: String, into step: inout Step) {
        guard failure == nil else { return }
        failure = why
        step.newFailure = why
        endEpisode()
    }

    private mutating func endEpisode() {
        episodeDeadline = nil
        episodeStart = nil
        rounds = 0
        lastUnknown = ""
    }
}

extension AppendPipeline.Release: Sendable where Completion: Sendable {}
extension AppendPipeline.Publish: Sendable where Completion: Sendable {}
