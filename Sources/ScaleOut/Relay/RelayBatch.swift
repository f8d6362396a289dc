// What one loop turn sends to one gateway, in order, with the messages many connections share
// gathered into one `deliver` each (sans-I/O: the outbox publishes what it makes).
//
// A shared message joins an earlier `deliver` of the same message only when the connection has
// nothing queued after that frame, so each connection still receives its messages in the order
// they were sent; otherwise it starts a new frame at the end.
import BangbangApplication
import PartitionOwner
import RelayProtocol
import WebSocketProtocol
import WebSocketServer

package struct RelayBatch {
    private enum Pending {
        case text(UInt64, [UInt8])
        case shared(SharedMessage, [UInt64])
        case close(UInt64, CloseCode, String)
    }

    private var pending: [Pending] = []
    /// The last frame each connection appears in.
    private var lastFrame: [UInt64: Int] = [:]
    /// The latest `deliver` frame of each shared message.
    private var sharedFrame: [ObjectIdentifier: Int] = [:]

    var isEmpty: Bool { pending.isEmpty }

    mutating func deliver(_ text: [UInt8], to id: UInt64) {
        append(.text(id, text), for: id)
    }

    mutating func deliver(_ message: SharedMessage, to id: UInt64) {
        let key = ObjectIdentifier(message)
        if let index = sharedFrame[key], (lastFrame[id] ?? -1) < index,
           case .shared(let shared, var ids) = pending[index], ids.count < RelayCodec.maxDeliverRecipients {
            // Drop the frame's own reference first, so the append grows the list in place
            // instead of copying it for every recipient.
            pending[index] = .close(0, .normalClosure, "")
            ids.append(id)
            pending[index] = .shared(shared, ids)
            lastFrame[id] = index
            return
        }
        sharedFrame[key] = pending.count
        append(.shared(message, [id]), for: id)
    }

    package mutating func close(_ id: UInt64, code: CloseCode, reason: String) {
        append(.close(id, code, reason), for: id)
    }

    private mutating func append(_ item: Pending, for id: UInt64) {
        lastFrame[id] = pending.count
        pending.append(item)
    }

    var frames: [RelayFrame] {
        pending.map { item in
            switch item {
            case .text(let id, let text): .deliver(connections: [id], text: text)
            case .shared(let message, let ids): .deliver(connections: ids, text: message.payload)
            case .close(let id, let code, let reason): .closeConnection(connection: id, code: code.rawValue, reason: reason)
            }
        }
    }
}
