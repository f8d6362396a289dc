// One read that every partition answers a part of (the counts of every board, a user's orders
// from every pair, an administrator's lists): the parts as they come, from whichever thread a
// reply arrives on, and the read's end, once. The first refusal or failure ends it, and the parts
// that come after are dropped; the read is complete when every partition's part is in.
import BangbangApplication
import PartitionOwner
import Synchronization

package final class PartitionGather<Part: Sendable, Refusal: Sendable>: Sendable {
    package enum Outcome {
        /// More parts to come, or the read is already over.
        case waiting
        case refused(Refusal)
        case complete([Part])
    }

    private let state = Mutex<(parts: [Part], isOver: Bool)>(([], false))
    private let expected: Int

    init(expected: Int) { self.expected = expected }

    package func add(_ part: Part) -> Outcome {
        state.withLock { state in
            guard !state.isOver else { return .waiting }
            state.parts.append(part)
            guard state.parts.count == expected else { return .waiting }
            state.isOver = true
            return .complete(state.parts)
        }
    }

    func refuse(_ refusal: Refusal) -> Outcome {
        state.withLock { state in
            guard !state.isOver else { return .waiting }
            state.isOver = true
            return .refused(refusal)
        }
    }
}
