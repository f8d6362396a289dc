// The partition map's answers are part of the deployment's layout (stream names, lease keys), so
// they are held to fixed values, and the placement to what failover relies on: one owner per
// partition, even shares, few moves beyond a lost node's own, and all back when it returns.
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

    @Test func everyPartitionHasOneOwnerAndEveryNodeAnEvenShare() {
        let owners = map.placement(of: map.allPartitions, among: nodes)
        #expect(owners.count == map.allPartitions.count)
        #expect(nodes.map { node in owners.values.filter { $0 == node }.count }.sorted() == [42, 43, 43])
        #expect(map.placement(of: map.allPartitions.reversed(), among: nodes.reversed()) == owners,
                "the order partitions and nodes are listed in does not matter")
        #expect(map.placement(of: map.allPartitions, among: [String]()).isEmpty)
        for nodeCount in 1...9 {
            let names = (1...nodeCount).map { "bb\($0)" }
            for partitionCount in [1, 2, 3, 4, 7, 16, 64] {
                let partitions = PartitionMap(partitionCount: partitionCount).allPartitions.filter { $0.space == .boards }
                let placed = map.placement(of: partitions, among: names)
                let shares = names.map { node in placed.values.filter { $0 == node }.count }
                let (share, remainder) = partitionCount.quotientAndRemainder(dividingBy: nodeCount)
                #expect(placed.count == partitionCount && Set(placed.keys) == Set(partitions))
                #expect(shares.allSatisfy { $0 == share || $0 == share + 1 } && shares.filter { $0 > share }.count == remainder,
                        "\(partitionCount) partitions over \(nodeCount) nodes: \(shares)")
            }
        }
    }

    /// Fixed values: the layout the end-to-end tests compute again from the docs.
    @Test func threePairsOverThreeNodesAreOneEach() {
        let pairs = (0..<4).map { PartitionID(space: .boards, index: $0) }
        #expect(map.placement(of: pairs.prefix(3), among: ["bb1", "bb2", "bb3"])
                == [pairs[0]: "bb2", pairs[1]: "bb3", pairs[2]: "bb1"])
        #expect(map.placement(of: pairs, among: ["bb1", "bb2", "bb3"])
                == [pairs[0]: "bb2", pairs[1]: "bb3", pairs[2]: "bb3", pairs[3]: "bb1"])
    }

    @Test func onePartitionGoesToTheNodeWeighingItHighest() {
        for count in 1...6 {
            let names = (0..<count).map { "node-\($0)" }
            for partition in map.allPartitions.prefix(10) {
                #expect(map.placement(of: [partition], among: names) == [partition: map.ranking(of: partition, among: names)[0]])
            }
        }
    }

    /// A lost node's partitions all move; to keep the shares even a few others do too (counted
    /// here for 64 partitions, the figure docs/scale-out.md gives); when it returns, everything
    /// is where it was.
    @Test func aLostNodesPartitionsMoveWithFewOthersAndAllMoveBackWhenItReturns() {
        let boards = map.allPartitions.filter { $0.space == .boards }
        for nodeCount in 2...8 {
            let names = (1...nodeCount).map { "bb\($0)" }
            let before = map.placement(of: boards, among: names)
            for lost in names {
                let during = map.placement(of: boards, among: names.filter { $0 != lost })
                #expect(!during.values.contains(lost))
                let othersMoved = boards.filter { before[$0] != lost && during[$0] != before[$0] }.count
                #expect(othersMoved <= 8, "\(lost) of \(nodeCount) lost: \(othersMoved) of the others' 64 moved")
                #expect(map.placement(of: boards, among: names) == before)
            }
        }
    }

    @Test func rankingListsEveryNodeOnceFromTheHighestWeight() {
        for partition in map.allPartitions.prefix(20) {
            let ranking = map.ranking(of: partition, among: Set(nodes))
            #expect(ranking.sorted() == nodes)
            #expect(ranking.map { PartitionMap.score(partition, $0) } == ranking.map { PartitionMap.score(partition, $0) }.sorted(by: >))
        }
    }
}
