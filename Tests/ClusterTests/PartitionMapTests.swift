// The partition map's answers are part of the deployment's layout (stream names, lease keys), so
// they are held to fixed values, and the rendezvous assignment to what failover relies on: one
// owner per partition, only a lost node's partitions move, and they move back when it returns.
import Testing
@testable import Cluster

@Suite struct PartitionMapTests {
    let map = PartitionMap()
    let nodes = ["node-a", "node-b", "node-c"]

    @Test func fnvMatchesItsPublishedTestVectors() {
        #expect(PartitionMap.fnv1a32("".utf8) == 0x811C_9DC5)
        #expect(PartitionMap.fnv1a32("a".utf8) == 0xE40C_292C)
        #expect(PartitionMap.fnv1a32("foobar".utf8) == 0xBF9C_F968)
        #expect(PartitionMap.fnv1a64("".utf8) == 0xCBF2_9CE4_8422_2325)
        #expect(PartitionMap.fnv1a64("a".utf8) == 0xAF63_DC4C_8601_EC8C)
        #expect(PartitionMap.fnv1a64("foobar".utf8) == 0x8594_4171_F739_67E8)
    }

    @Test func aCampusAlwaysLandsInTheSameBoardPartition() {
        let campus = "北京大学 North"
        let expected = Int(PartitionMap.fnv1a32(campus.utf8) % 64)
        #expect(map.partition(ofCampus: campus) == PartitionID(space: .boards, index: expected))
        #expect(PartitionMap(partitionCount: 64).partition(ofCampus: campus) == map.partition(ofCampus: campus))
        #expect(map.partition(ofCampus: "North").description == "p\(PartitionMap.fnv1a32("North".utf8) % 64)")
        #expect(PartitionMap(partitionCount: 1).partition(ofCampus: campus).index == 0)
    }

    @Test func usersPartitionByIdInTheirOwnSpace() {
        #expect(map.partition(ofUser: 130) == PartitionID(space: .accounts, index: 2))
        #expect(map.partition(ofUser: 130).description == "a2")
        #expect(map.partition(ofUser: 63).index == 63 && map.partition(ofUser: 64).index == 0)
        #expect(map.allPartitions.count == 128 && Set(map.allPartitions).count == 128)
    }

    @Test func campusesSpreadOverAllPartitions() {
        var counts = [Int](repeating: 0, count: 64)
        for number in 0..<6_400 { counts[map.partition(ofCampus: "campus-\(number)").index] += 1 }
        #expect(counts.min()! > 50 && counts.max()! < 160, "100 expected per partition: \(counts)")
    }

    @Test func everyPartitionHasExactlyOneOwnerAndTheLoadIsShared() {
        let owners = map.assignment(among: nodes)
        #expect(owners.count == map.allPartitions.count)
        for node in nodes {
            let share = owners.values.filter { $0 == node }.count
            #expect((20...70).contains(share), "\(node) owns \(share) of 128")
        }
        #expect(map.assignment(among: nodes.reversed()) == owners, "the order nodes are listed in does not matter")
        #expect(map.assignment(among: [String]()).isEmpty)
    }

    @Test func onlyALostNodesPartitionsMoveAndTheyMoveBackWhenItReturns() {
        let before = map.assignment(among: nodes)
        let survivors = ["node-a", "node-c"]
        let during = map.assignment(among: survivors)
        for partition in map.allPartitions {
            if before[partition] == "node-b" {
                #expect(during[partition] == map.ranking(of: partition, among: nodes)[1], "its next-ranked node takes it")
            } else {
                #expect(during[partition] == before[partition], "\(partition) stays where it was")
            }
        }
        #expect(!during.values.contains("node-b"))
        #expect(map.assignment(among: nodes) == before)
    }

    @Test func rankingStartsWithThePreferredOwnerAndListsEveryNodeOnce() {
        for partition in map.allPartitions.prefix(20) {
            let ranking = map.ranking(of: partition, among: Set(nodes))
            #expect(ranking.sorted() == nodes)
            #expect(ranking.first == map.preferredOwner(of: partition, among: nodes))
        }
    }
}
