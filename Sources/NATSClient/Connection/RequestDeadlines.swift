// When the connection's waiting requests time out, kept in one min-heap so that one timer on the
// loop serves them all: a dispatch timer per request costs a wake-up of Dispatch's timer thread
// for each, which a pipeline of thousands of appends a second cannot afford. A request answered
// early stays in the heap until its deadline passes; it is then found answered and skipped.
//
// Plain state: the connection keeps it under its lock and arms the one timer it asks for.

struct RequestDeadlines {
    private struct Entry {
        var deadline: Int64
        var token: UInt64
    }

    private var heap: [Entry] = []
    /// The deadline the loop's timer is armed for, if any.
    private(set) var armedDeadline: Int64?

    var count: Int { heap.count }

    /// Records `token`'s deadline; returns the deadline to arm a timer for when the armed one
    /// (if any) would fire too late for it.
    mutating func add(token: UInt64, deadline: Int64) -> Int64? {
        push(Entry(deadline: deadline, token: token))
        if let armed = armedDeadline, armed <= deadline { return nil }
        armedDeadline = deadline
        return deadline
    }

    /// Called by the timer armed for `deadline` at `now`: every token whose deadline has come, and
    /// the deadline to arm next, if this timer was the one armed and requests remain.
    mutating func expire(firedFor deadline: Int64, now: Int64) -> (expired: [UInt64], rearm: Int64?) {
        var expired: [UInt64] = []
        while let first = heap.first, first.deadline <= now {
            expired.append(first.token)
            popFirst()
        }
        guard armedDeadline == deadline else { return (expired, nil) }
        armedDeadline = heap.first?.deadline
        return (expired, armedDeadline)
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popFirst() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
