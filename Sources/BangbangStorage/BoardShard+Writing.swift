// Board shards written straight into the keyed binary form, without Codable: a shard is most of
// a snapshot (its orders), and going through the generic encoder's containers for it cost more
// than the orders' own bytes. The same bytes, in the same order, as `BoardShard.encode(to:)`
// makes through `KeyedBinaryEncoder`; `SnapshotTests` holds the two together.
import BangbangCore

extension BoardShard: KeyedBinaryWritable {
    func write(to writer: inout KeyedBinaryWriter) { writer.write(self) }
}

extension KeyedBinaryWriter {
    mutating func write(_ shard: BoardShard) {
        beginKeyed()
        member("index", shard.index)
        key("nextSerial")
        write(unsigned: shard.nextSerial)
        key("orders")
        beginUnkeyed()
        shard.orders.forEachByID { write($0) }
        endUnkeyed()
        endKeyed()
    }
}
