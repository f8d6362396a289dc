// Fuzz target: the inbox's decoders (InboxProtocol): the message, and what a snapshot keeps of
// an outbox and of a reader.
//
// The first byte picks the decoder (0xF8 and above: one event as an owner publishes it on the
// user subjects, `PersonalEventFrame`; 0xF0 to 0xF7: an owner's answer to "a user's events after
// N", `PersonalStreamAnswer`; 0xE8 to 0xEF: a board change as an owner publishes it on the feed
// subjects, `FeedEventFrame`; 0xE0 to 0xE7: a board partition's part of a listing,
// `BoardListAnswer`; below, modulo 3: 0 a message, 1 an outbox state, 2 a reader state);
// the rest is its input. Invariants, beyond "no crash and no sanitizer report":
//   - what decodes encodes back to exactly the bytes it came from (one wire form per value:
//     nothing is accepted that the encoder would not write);
//   - a decoded message fits one publish; a decoded outbox state restores an outbox that keeps
//     the same state and sends every pending entry first, in order, in messages that fit;
//   - the decoder gives the same answer for the input copied into a slice that does not start
//     at index 0;
//   - a decoded answer's numbers rise and none passes its last;
//   - a decoded event names a user and a number and carries a message, a decoded board change a
//     sequence and an order after it, each read in place;
//   - a decoded listing part has no more orders than matches, and none empty.
import InboxProtocol

/// `precondition` drops its message in optimized builds, and a fuzz failure needs it.
private func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}

/// The source a decoded outbox state is restored as (the state does not name one).
private let outboxSource = InboxSource(space: .boards, index: 1)

/// Decodes `payload` as it is and shifted by one, requires both answers to agree, and returns
/// the value when it encodes back to `payload`.
private func decodeBoth<Value: Equatable>(
    _ payload: [UInt8], _ decode: (ArraySlice<UInt8>) throws(InboxProtocolError) -> Value, encode: (Value) -> [UInt8]
) -> Value? {
    let decoded = Result { () throws(InboxProtocolError) in try decode(payload[...]) }
    let shifted = [0xAA] + payload
    let again = Result { () throws(InboxProtocolError) in try decode(shifted[1...]) }
    switch (decoded, again) {
    case (.success(let first), .success(let second)):
        require(first == second, "the slice's start index changed the value")
    case (.failure(let first), .failure(let second)):
        require(first == second, "the slice's start index changed the error")
    default:
        require(false, "the slice's start index changed the outcome")
    }
    guard case .success(let value) = decoded else { return nil }
    require(encode(value) == payload, "a decoded value did not encode back to its bytes")
    return value
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzInboxProtocol(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let payload = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    if data[0] >= 0xF8 {
        guard let event = PersonalEventFrame.decode(payload[...]) else { return 0 }
        require(event.user >= 1 && event.number >= 1 && !event.message.isEmpty, "a decoded event lacks a part")
        require(PersonalEventFrame.encode(user: event.user, number: event.number, message: Array(event.message)) == payload,
                "a decoded event did not encode back to its bytes")
        let shifted = [0xAA] + payload
        require(PersonalEventFrame.decode(shifted[1...]) == event, "the slice's start index changed the event")
        return 0
    }
    if data[0] >= 0xE0 && data[0] < 0xE8 {
        guard let answer = BoardListAnswer.decode(payload[...]) else { return 0 }
        require(BoardListAnswer.encode(answer) == payload, "a decoded listing part did not encode back to its bytes")
        require(answer.entries.count <= Int(answer.total) && answer.entries.allSatisfy { !$0.order.isEmpty },
                "a decoded listing part breaks its rules")
        let shifted = [0xAA] + payload
        require(BoardListAnswer.decode(shifted[1...]) == answer, "the slice's start index changed the listing part")
        return 0
    }
    if data[0] >= 0xE8 && data[0] < 0xF0 {
        guard let change = FeedEventFrame.decode(payload[...]) else { return 0 }
        require(change.sequence >= 1 && !change.after.isEmpty, "a decoded change lacks a part")
        require(FeedEventFrame.encode(partition: change.partition, sequence: change.sequence,
                                      before: change.before.isEmpty ? nil : Array(change.before), after: Array(change.after)) == payload,
                "a decoded change did not encode back to its bytes")
        let shifted = [0xAA] + payload
        require(FeedEventFrame.decode(shifted[1...]) == change, "the slice's start index changed the change")
        return 0
    }
    if data[0] >= 0xF0 {
        guard let answer = PersonalStreamAnswer.decode(payload) else { return 0 }
        require(PersonalStreamAnswer.encode(last: answer.last, events: answer.events) == payload,
                "a decoded answer did not encode back to its bytes")
        require(zip(answer.events, answer.events.dropFirst()).allSatisfy { $0.number < $1.number }
                && answer.events.allSatisfy { $0.number >= 1 && $0.number <= answer.last }, "an answer's numbers are out of order")
        return 0
    }
    switch data[0] % 3 {
    case 0:
        guard let message = decodeBoth(payload, { (bytes) throws(InboxProtocolError) in try InboxCodec.decode(bytes) },
                                       encode: InboxCodec.encode) else { return 0 }
        require(InboxCodec.fits(message) && InboxCodec.size(of: message) == payload.count, "a decoded message does not fit")
    case 1:
        guard let state = decodeBoth(payload, { (bytes) throws(InboxProtocolError) in try InboxStateCodec.decodeOutbox(bytes) },
                                     encode: InboxStateCodec.encode) else { return 0 }
        var outbox = InboxOutbox(source: outboxSource, state: state)
        require(outbox.state == state, "a restored outbox changed its state")
        let publishes = outbox.publishes()
        require(outbox.state == state, "publishing changed a restored outbox's state")
        for (index, destination) in state.destinations {
            let sent = publishes.filter { $0.destination == index }.flatMap(\.message.entries)
            require(sent == destination.pending, "a restored outbox did not send its pending entries first, in order")
        }
        require(publishes.allSatisfy { InboxCodec.fits($0.message) }, "a restored outbox made a message that does not fit")
    default:
        _ = decodeBoth(payload, { (bytes) throws(InboxProtocolError) in try InboxStateCodec.decodeReader(bytes) },
                       encode: InboxStateCodec.encode)
    }
    return 0
}
