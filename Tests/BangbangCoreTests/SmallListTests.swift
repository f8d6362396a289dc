// SmallList against Array, the model it must behave like, through random operations that cross
// the boundary between one element kept inline and several kept in an array, both ways.
import Testing
import TestSupport
@testable import BangbangCore

@Suite struct SmallListTests {
    @Test func behavesLikeAnArray() {
        var generator = SeededGenerator(seed: 6)
        for _ in 0..<200 {
            var list = SmallList<Int>()
            var model: [Int] = []
            for step in 0..<40 {
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<4:
                    list.append(step)
                    model.append(step)
                case 4..<6 where !model.isEmpty:
                    let index = Int.random(in: 0..<model.count, using: &generator)
                    #expect(list.remove(at: index) == model.remove(at: index))
                case 6..<8:
                    let modulus = Int.random(in: 1...3, using: &generator)
                    list.removeAll { $0 % modulus == 0 }
                    model.removeAll { $0 % modulus == 0 }
                case 8 where !model.isEmpty:
                    let index = Int.random(in: 0..<model.count, using: &generator)
                    list[index] = -step
                    model[index] = -step
                default:
                    break
                }
                #expect(Array(list) == model)
                #expect(list.count == model.count && list.isEmpty == model.isEmpty)
                #expect(list == SmallList(model))
            }
        }
    }

    @Test func equalListsAreEqualWhateverTheirPast() {
        var grown: SmallList = [1, 2, 3]
        grown.removeAll { $0 > 1 }
        #expect(grown == [1])
        #expect(grown != [])
        #expect(grown != [1, 2])
        grown.remove(at: 0)
        #expect(grown == [])
    }

    @Test func oneElementNeedsNoArray() {
        final class Connection {}
        // A class reference and a tag: no heap object of its own for the usual single element.
        #expect(MemoryLayout<SmallList<Connection>>.size <= 9)
        #expect(MemoryLayout<SmallList<Int>>.size <= 9)
    }
}
