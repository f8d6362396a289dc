// The owners of domain state. Each state object lives on exactly one serial queue, so every
// decision about it is totally ordered without locks spread around the code: the accounts
// store on `AccountsExecutor.queue`, each board shard on its `ShardExecutor.queue`.
//
// The change path, the same for every operation:
//   on the owner's queue:   decide → apply → `Application.commit` (append to the journal)
//   when the journal says the record is durable (`Application.commitQueue`, in sequence order,
//   one hop per journal batch):
//                           reply to the client → push to everyone concerned
// Applying before the record is durable lets the next command on the same owner see the change
// (two accepts racing for one order: the second sees it taken), while nobody hears of it before
// it is durable. If the journal fails, the requests get `storage_unavailable` and the server
// rebuilds its state from disk, so nothing applied but not stored survives.
import BangbangCore
import Dispatch

/// Owns the `AccountStore`. `store` may be touched only on `queue`.
final class AccountsExecutor: @unchecked Sendable {
    let queue: DispatchQueue
    var store: AccountStore

    /// `target`: see `Application.init`'s `ownersTarget`.
    init(store: AccountStore, target: DispatchQueue? = nil) {
        self.store = store
        self.queue = DispatchQueue(label: "bangbang.accounts", qos: .userInitiated, target: target)
    }

    func perform(_ body: @escaping @Sendable (AccountsExecutor) -> Void) {
        queue.async { body(self) }
    }
}

/// Owns one `BoardShard`. `shard` may be touched only on `queue`.
final class ShardExecutor: @unchecked Sendable {
    let queue: DispatchQueue
    let type: OrderType
    var shard: BoardShard
    /// The due-transition timer currently armed, and for when.
    var timer: DispatchSourceTimer?
    var timerDueAt: Timestamp?

    /// `target`: see `Application.init`'s `ownersTarget`.
    init(shard: BoardShard, type: OrderType, target: DispatchQueue? = nil) {
        self.shard = shard
        self.type = type
        self.queue = DispatchQueue(label: "bangbang.shard.\(shard.index)", qos: .userInitiated, target: target)
    }

    func perform(_ body: @escaping @Sendable (ShardExecutor) -> Void) {
        queue.async { body(self) }
    }
}
