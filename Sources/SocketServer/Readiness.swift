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
// The same table is the loop's registry of connections: a connection takes a slot when it
// starts (before its descriptor enters the epoll set) and gives it back when it is released
// (after its descriptor left the set and was closed), so one array serves both the deadline
// sweep and the lookup of epoll events, and a connection remembers only its slot. The token
// handed to epoll is the slot and its generation, so an event fetched for a connection whose
// slot has since been given back (and perhaps reused) is recognised as stale and dropped.
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
    /// Registered connections by slot; nil in slots given back and not reused yet.
    private var slots: [Connection?] = []
    private var generations: [UInt32] = []
    private var freeSlots: [Int32] = []

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

    /// Connections registered now.
    var count: Int { slots.count - freeSlots.count }

    /// Gives `connection` a slot (`connection.slot`) until `unregister`.
    mutating func register(_ connection: Connection) {
        precondition(connection.slot < 0, "internal inconsistency in ReadinessTable: a connection registered twice")
        if let free = freeSlots.popLast() {
            slots[Int(free)] = connection
            connection.slot = free
        } else {
            precondition(slots.count < Int(Int32.max), "internal inconsistency in ReadinessTable: out of slots")
            connection.slot = Int32(slots.count)
            slots.append(connection)
            generations.append(0)
        }
    }

    /// Gives the slot back; events already fetched for it are ignored from now on.
    mutating func unregister(_ connection: Connection) {
        let slot = Int(connection.slot)
        guard slot >= 0, slot < slots.count, slots[slot] === connection else {
            fatalError("internal inconsistency in ReadinessTable: unregistering a connection that is not registered")
        }
        slots[slot] = nil
        generations[slot] &+= 1
        freeSlots.append(Int32(slot))
        connection.slot = -1
    }

    /// Starts watching the registered `connection`'s descriptor with `events`.
    func add(_ connection: Connection, events: UInt32) throws(Errno) {
        try syscalls.pollControl(pollDescriptor, Int32(EPOLL_CTL_ADD), connection.descriptor, events: events,
                                 token: token(of: connection))
    }

    func change(_ connection: Connection, events: UInt32) throws(Errno) {
        try syscalls.pollControl(pollDescriptor, Int32(EPOLL_CTL_MOD), connection.descriptor, events: events,
                                 token: token(of: connection))
    }

    /// Stops watching the descriptor; the connection keeps its slot until `unregister`.
    func remove(_ connection: Connection) {
        syscalls.pollRemove(pollDescriptor, connection.descriptor)
    }

    /// The registered connection a fetched token names, or nil if its slot was given back since.
    func connection(for token: UInt64) -> Connection? {
        let slot = Int(token & 0xFFFF_FFFF)
        guard slot < slots.count, generations[slot] == UInt32(token >> 32) else { return nil }
        return slots[slot]
    }

    /// Slots in use or given back; `connection(inSlot:)` takes any below this.
    var slotCount: Int { slots.count }

    /// The connection registered in `slot`, or nil if none is.
    func connection(inSlot slot: Int) -> Connection? { slots[slot] }

    private func token(of connection: Connection) -> UInt64 {
        let slot = Int(connection.slot)
        precondition(slot >= 0 && slot < slots.count && slots[slot] === connection,
                     "internal inconsistency in ReadinessTable: polling an unregistered connection")
        return UInt64(generations[slot]) << 32 | UInt64(slot)
    }
}
