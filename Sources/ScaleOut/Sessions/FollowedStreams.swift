// A node's following of personal streams another node numbers, so a device may log in or resume
// on any node: for each device here whose user's account partition is owned elsewhere,
// the user's events in number order, each once. They come from the owner's publishes on the
// user's subject (UserSubjects.swift) and, for what those miss, from the owner's answer to
// `node.stream_after` (PersonalStreamQuery.swift). A `PersonalStreamFollower` per device decides
// (each device resumes from its own number); this class does the I/O around the followers: one
// subscription per bucket, held while a device here follows a user of it; the questions, one for
// every device of a user that needs the same events, with a growing pause before one asked again
// when the last answer brought nothing; each device's sink.
// An event lost with nothing after it to show it is asked for as well: every device rechecks when
// this node's NATS connection comes back (checked each second) and when the owner of its user's
// partition announces itself (a new owner published nothing of what it numbered while recovering).
//
// A device whose events were lost (the owner no longer keeps them, refused the question, or could
// not be asked) is told once and forgotten: its connection is closed with 1012, and the client
// resumes and is told to resynchronize, as the protocol promises for events no longer kept.
import BangbangApplication
import BangbangCore
import BangbangProtocol
import Cluster
import Dispatch
import InboxProtocol
import NATSClient
import PartitionOwner
import Synchronization
import WebSocketServer

package final class FollowedStreams: @unchecked Sendable {
    // Confinement: every `var` is touched only on `queue`, where the subscriptions deliver, the
    // owner's answers are handed back and the connection is watched.

    package struct Event: Sendable {
        let number: UInt64
        /// Built once per event received, whichever devices here it goes to.
        package let message: SharedMessage
        /// What the event changes of a login, read once for every device.
        let change: AccountChange?

        init(number: UInt64, text: [UInt8]) {
            self.number = number
            change = AccountChange.read(text)
            message = SharedMessage(text: text)
        }
    }

    package struct Sink: Sendable {
        /// Events for the device in number order, on `queue`; each carries its number as the
        /// protocol's `seq`.
        let deliver: @Sendable ([Event]) -> Void
        /// Events were lost for the device (on `queue`, once, and nothing is delivered after):
        /// close its connection with 1012.
        let lost: @Sendable (_ reason: String) -> Void
    }

    /// Consecutive questions that could not be asked (no owner within the route's bound, or no
    /// answer) before a device's events count as lost.
    static let failedQuestionLimit = 3
    /// Questions asked again, each answer bringing nothing new, before the device's events count as
    /// lost: what it holds is past anything the owner has numbered.
    static let fruitlessQuestionLimit = 12

    private struct Following {
        package let user: UserID
        var follower: PersonalStreamFollower<Event>
        let sink: Sink
        var failedQuestions = 0
        var fruitlessQuestions = 0
    }

    let queue = DispatchQueue(label: "bangbang.followed-streams", qos: .userInitiated)
    private let connection: NATSConnection
    private let requests: PartitionRequests
    private let map: PartitionMap
    private let subjects: UserSubjects
    private let metrics: RelayMetrics
    private let logger: Logger
    private let nextDevice = Atomic<UInt64>(0)
    private let usersFollowedNow = Atomic<Int>(0)
    private var devices: [UInt64: Following] = [:]
    private var devicesByUser: [UserID: [UInt64]] = [:]
    private var buckets: [UInt64: (subscription: NATSSubscription, users: Int)] = [:]
    private var reconnects = 0
    /// The questions out, by user and number, and the devices waiting for each answer.
    private var questions: [Question: [UInt64]] = [:]

    private struct Question: Hashable {
        package let user: UserID
        package let after: UInt64
    }
    private var owners: NATSSubscription?
    private var timer: DispatchSourceTimer?

    init(connection: NATSConnection, requests: PartitionRequests, map: PartitionMap,
         subjects: UserSubjects = UserSubjects(), metrics: RelayMetrics, logger: Logger) {
        self.connection = connection
        self.requests = requests
        self.map = map
        self.subjects = subjects
        self.metrics = metrics
        self.logger = logger
    }

    /// Starts listening for new owners and watching the connection. Call once, before `follow`.
    package func start() throws(NATSClientError) {
        let owners = try connection.subscribe(to: subjects.ownerSubject, deliveringOn: queue) { [weak self] message in
            self?.recheck(partition: String(decoding: message.payload, as: UTF8.self))
        }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            let count = connection.reconnectCount
            guard count != reconnects else { return }
            reconnects = count
            recheck(partition: nil)
        }
        queue.sync {
            reconnects = connection.reconnectCount
            (self.owners, self.timer) = (owners, timer)
        }
        timer.resume()
    }

    /// Stops the watch and every subscription; devices still following are told nothing more.
    func stop() {
        queue.sync {
            owners?.unsubscribe()
            timer?.cancel()
            (owners, timer) = (nil, nil)
            for entry in buckets.values { entry.subscription.unsubscribe() }
            buckets = [:]
            metrics.followedStreams.add(-devices.count)
            devices = [:]
            devicesByUser = [:]
        }
    }

    /// Follows `user`'s stream after `number` for a device here: its events go to `sink`, starting
    /// with those the owner keeps after `number`. Returns the device's handle. Any thread.
    func follow(_ user: UserID, after number: UInt64, sink: Sink) -> UInt64 {
        let device = nextDevice.add(1, ordering: .relaxed).newValue
        queue.async { [self] in
            // Subscribed before the question is sent on the same connection, so every event the
            // owner numbers after answering reaches this node.
            do throws(NATSClientError) {
                try subscribe(for: user)
            } catch {
                return sink.lost("cannot subscribe to the user's events: \(error)")
            }
            devices[device] = Following(user: user, follower: PersonalStreamFollower(after: number), sink: sink)
            devicesByUser[user, default: []].append(device)
            usersFollowedNow.store(devicesByUser.count, ordering: .relaxed)
            metrics.followedStreams.add(1)
            ask(device, after: number)
        }
        return device
    }

    /// Stops following for `device` (its connection closed). Any thread, any number of times.
    func unfollow(_ device: UInt64) {
        queue.async { [self] in forget(device) }
    }

    /// The users whose stream a device here follows: the users logged in on this node. Any thread.
    var usersFollowed: Int { usersFollowedNow.load(ordering: .relaxed) }

    /// How many devices follow a stream here, and how many buckets are subscribed. On `queue`.
    var counts: (devices: Int, buckets: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        return (devices.count, buckets.count)
    }

    private func subscribe(for user: UserID) throws(NATSClientError) {
        guard devicesByUser[user] == nil else { return }
        let bucket = UserSubjects.bucket(of: user)
        if let entry = buckets[bucket] {
            buckets[bucket] = (entry.subscription, entry.users + 1)
            return
        }
        let subscription = try connection.subscribe(to: subjects.subject(of: user), deliveringOn: queue) { [weak self] message in
            self?.received(message.payload)
        }
        buckets[bucket] = (subscription, 1)
    }

    private func forget(_ device: UInt64) {
        guard let following = devices.removeValue(forKey: device) else { return }
        metrics.followedStreams.add(-1)
        let user = following.user
        devicesByUser[user]?.removeAll { $0 == device }
        guard devicesByUser[user]?.isEmpty == true else { return }
        devicesByUser[user] = nil
        usersFollowedNow.store(devicesByUser.count, ordering: .relaxed)
        let bucket = UserSubjects.bucket(of: user)
        guard let entry = buckets[bucket] else { return }
        if entry.users > 1 {
            buckets[bucket] = (entry.subscription, entry.users - 1)
        } else {
            buckets[bucket] = nil
            entry.subscription.unsubscribe()
        }
    }

    /// Asks for what came after each device's head, for the devices of users of `partition` (all
    /// when nil), unless a question is out for it already.
    private func recheck(partition: String?) {
        for (device, following) in devices {
            guard partition == nil || map.partition(ofUser: following.user.rawValue).description == partition,
                  let outcome = devices[device]?.follower.recheck() else { continue }
            apply(outcome, to: device)
        }
    }

    /// An event on a subscribed bucket: for the devices of its user here, if any.
    private func received(_ payload: ArraySlice<UInt8>) {
        guard let frame = PersonalEventFrame.decode(payload) else {
            return logger.warning("user_event_refused", ["bytes": payload.count, "detail": "not a personal event; dropped"])
        }
        guard let followers = devicesByUser[UserID(frame.user)] else { return }
        let event = Event(number: frame.number, text: Array(frame.message))
        for device in followers {
            guard let outcome = devices[device]?.follower.receive(event, number: frame.number) else { continue }
            apply(outcome, to: device)
        }
    }

    private func apply(_ outcome: PersonalStreamFollower<Event>.Outcome, to device: UInt64, pauseMilliseconds: Int = 0) {
        guard let following = devices[device] else { return }
        if outcome.lost {
            return lose(device, "events of the user's stream are no longer kept by its owner")
        }
        if !outcome.events.isEmpty { following.sink.deliver(outcome.events) }
        if let after = outcome.ask { ask(device, after: after, pauseMilliseconds: pauseMilliseconds) }
    }

    /// On `queue`: at once, or after the pause.
    private func ask(_ device: UInt64, after: UInt64, pauseMilliseconds: Int = 0) {
        guard pauseMilliseconds > 0 else { return send(device, after: after) }
        queue.asyncAfter(deadline: .now() + .milliseconds(pauseMilliseconds)) { [weak self] in self?.send(device, after: after) }
    }

    private func send(_ device: UInt64, after: UInt64) {
        guard let user = devices[device]?.user else { return }
        // Devices of one user that need the same events (a reconnect, a new owner) share one question.
        let key = Question(user: user, after: after)
        guard questions[key] == nil else { return questions[key]!.append(device) }
        questions[key] = [device]
        metrics.streamQuestions.increment()
        let (requests, queue) = (requests, queue)
        let partition = map.partition(ofUser: user.rawValue)
        let payload = RoutedRequest(id: .integer(1), operation: PersonalStreamQuery.operation,
                                    data: ["user": .integer(Int64(user.rawValue)), "after": .integer(Int64(after))],
                                    actor: nil).encoded()
        Task {
            let result = await requests.request(partition, payload: payload)
            queue.async { [weak self] in
                guard let self else { return }
                // Read and framed once for every device waiting on the answer.
                let answer = result.map { bytes -> Answer in
                    guard let decoded = PersonalStreamAnswer.decode(bytes) else {
                        return .refused(String(decoding: bytes.prefix(200), as: UTF8.self))
                    }
                    return .events(last: decoded.last, decoded.events.map {
                        (number: $0.number, event: Event(number: $0.number, text: $0.message))
                    })
                }
                for device in questions.removeValue(forKey: key) ?? [] { answered(device, after: after, answer) }
            }
        }
    }

    /// The owner's answer to a question, as the devices waiting on it take it.
    private enum Answer {
        case events(last: UInt64, [(number: UInt64, event: Event)])
        /// A refusal (its reply's beginning), not an answer.
        case refused(String)
    }

    private func answered(_ device: UInt64, after: UInt64, _ result: Result<Answer, RouteFailure>) {
        guard var following = devices[device] else { return }
        switch result {
        case .success(.refused(let reply)):
            return lose(device, "the owner refused the question: \(reply)")
        case .success(.events(let last, let events)):
            let outcome = following.follower.replayed(after: after, events: events, through: last)
            following.failedQuestions = 0
            following.fruitlessQuestions = outcome.events.isEmpty && outcome.ask != nil ? following.fruitlessQuestions + 1 : 0
            devices[device] = following
            guard following.fruitlessQuestions <= Self.fruitlessQuestionLimit else {
                return lose(device, "events held past the owner's last number (\(last)) never came")
            }
            // Asked again at once when the answer moved the stream on; after 50 ms doubling to
            // 1.6 s while answers bring nothing.
            let pause = following.fruitlessQuestions == 0 ? 0 : 50 << min(following.fruitlessQuestions - 1, 5)
            apply(outcome, to: device, pauseMilliseconds: pause)
        case .failure(let failure):
            following.failedQuestions += 1
            devices[device] = following
            guard following.failedQuestions < Self.failedQuestionLimit else {
                return lose(device, "the owner could not be asked for the user's events: \(failure)")
            }
            ask(device, after: after, pauseMilliseconds: 1_000)
        }
    }

    private func lose(_ device: UInt64, _ reason: String) {
        guard let following = devices[device] else { return }
        forget(device)
        metrics.streamLosses.increment()
        logger.warning("followed_stream_lost", ["user": following.user.rawValue, "detail": reason])
        following.sink.lost(reason)
    }
}
