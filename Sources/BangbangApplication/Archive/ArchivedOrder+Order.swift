// Reading an archived order back: the `Order` in its `encoded` bytes (`StoredOrder`, the
// journal's keyed binary form), as `ArchivedOrder(_:)` in ArchiveFile.swift wrote it.
import BangbangCore
import BangbangStorage
import OrderArchive

extension Order {
    /// The order an archive record holds. A record whose bytes do not decode, or decode to
    /// another order, is corruption: `internal_error`, never a silently missing order.
    init(archived: ArchivedOrder) throws(DomainError) {
        do {
            self = try StoredOrder.decode(archived.encoded)
        } catch {
            throw DomainError(.internalError, "archived order \(archived.id) cannot be read")
        }
        refreshSearchText()
        guard String(id.rawValue) == archived.id else {
            throw DomainError(.internalError, "archived order \(archived.id) holds order \(id)")
        }
    }
}
