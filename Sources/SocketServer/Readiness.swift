// Readiness: which of a loop's sockets can be read or written, for one Dispatch wakeup per batch.
//
// Each event loop has one epoll instance holding every connection's descriptor, level-triggered,
// and one DispatchSourceRead on the epoll descriptor itself. When any socket becomes ready the
// epoll descriptor turns readable, Dispatch runs the loop's handler once on the loop's queue, and
// the handler takes the ready sockets in batches with a non-blocking `epoll_wait`. A turn that
// serves a hundred connections therefore costs one Dispatch wakeup instead of a hundred source
// events, each re-armed through Dispatch's manager thread, and an idle connection owns no
// Dispatch object at all. Write interest is added only while a connection's output is blocked.
//
// Each registered connection holds a slot; the token handed to epoll is the slot and its
// generation, so an event fetched in a batch for a connection that an earlier event in the same
// batch closed (and whose slot may be reused) is recognised as stale and dropped.
import CLinux
import Glibc
import Platform

/// Confined to its loop's queue, like the loop's other mutable state.
struct ReadinessTable {
    /// Events fetched per `epoll_wait`.
    static let batchCapacity: Int32 = 256

    let syscalls: Syscalls
    let pollDescriptor: Int32
    let events: UnsafeMutablePointer<epoll_event>
    private var slots: [Connection?] = []
    private var generations: [UInt32] = []
    private var freeSlots: [Int] = []

    init(syscalls: Syscalls) {
        self.syscalls = syscalls
        do {
            pollDescriptor = try syscalls.pollCreate()
        } catch {
            fatalError("cannot create an epoll instance for an event loop: \(error)")
        }
        events = UnsafeMutablePointer<epoll_event>.allocate(capacity: Int(Self.batchCapacity))
    }

    /// Closes the epoll descriptor and frees the event buffer; for the loop's source's cancel
    /// handler, the one point after which Dispatch no longer touches the descriptor.
    var release: @Sendable () -> Void {
        let descriptor = pollDescriptor
        let syscalls = syscalls
        nonisolated(unsafe) let buffer = events
        return {
            syscalls.close(descriptor)
            buffer.deallocate()
        }
    }

    /// Starts watching `connection`'s descriptor with `events`; returns its token.
    mutating func add(_ connection: Connection, events: UInt32) throws(Errno) -> UInt64 {
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = connection
        } else {
            slot = slots.count
            slots.append(connection)
            generations.append(0)
        }
        let token = UInt64(generations[slot]) << 32 | UInt64(slot)
        do {
            try syscalls.pollControl(pollDescriptor, Int32(EPOLL_CTL_ADD), connection.descriptor, events: events, token: token)
        } catch {
            release(slot: slot)
            throw error
        }
        return token
    }

    func change(_ connection: Connection, token: UInt64, events: UInt32) throws(Errno) {
        try syscalls.pollControl(pollDescriptor, Int32(EPOLL_CTL_MOD), connection.descriptor, events: events, token: token)
    }

    /// Stops watching; events already fetched for `token` are ignored from now on.
    mutating func remove(_ connection: Connection, token: UInt64) {
        syscalls.pollRemove(pollDescriptor, connection.descriptor)
        release(slot: Int(token & 0xFFFF_FFFF))
    }

    /// The live connection a fetched token names, or nil if it was removed since.
    func connection(for token: UInt64) -> Connection? {
        let slot = Int(token & 0xFFFF_FFFF)
        guard slot < slots.count, generations[slot] == UInt32(token >> 32) else { return nil }
        return slots[slot]
    }

    private mutating func release(slot: Int) {
        slots[slot] = nil
        generations[slot] &+= 1
        freeSlots.append(slot)
    }
}
