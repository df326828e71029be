import SceneSyncTestKit
import Testing

@testable import SceneSyncCore

/// The store's entries in chunks behave as one array: the same elements in the same order after any appends,
/// removals and changes, and a copy never sees the changes made to the original.
@Suite struct ChunkedArrayTests {
    /// A seeded walk of appends, removals from the end and changes in place, checked against an array after each
    /// step, across several chunk boundaries.
    @Test(arguments: [1, 2, 3])
    func sameAsAnArrayOverARandomWalk(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var chunked = ChunkedArray<Int>()
        var reference: [Int] = []
        let size = ChunkedArray<Int>.chunkSize
        for step in 0..<(size * 6) {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                chunked.append(step)
                reference.append(step)
            case 6..<8 where !reference.isEmpty:
                #expect(chunked.removeLast() == reference.removeLast())
            case 8..<10 where !reference.isEmpty:
                let position = Int.random(in: 0..<reference.count, using: &generator)
                chunked[position] += 1_000_000
                reference[position] += 1_000_000
            default:
                break
            }
            #expect(chunked.count == reference.count)
        }
        #expect(reference.count > size * 2)
        #expect(Array(chunked) == reference)
    }

    @Test func emptyingAcrossAChunkBoundaryAndGrowingAgain() {
        let size = ChunkedArray<Int>.chunkSize
        var chunked = ChunkedArray<Int>()
        for value in 0..<(size + 1) { chunked.append(value) }
        chunked.removeLast()
        chunked.removeLast()
        #expect(Array(chunked) == Array(0..<(size - 1)))
        for value in 0..<(size * 2) { chunked.append(value) }
        #expect(chunked.count == size * 3 - 1)
        #expect(chunked[size - 1] == 0)
        #expect(chunked[chunked.count - 1] == size * 2 - 1)
        while !chunked.isEmpty { chunked.removeLast() }
        #expect(Array(chunked).isEmpty)
    }

    @Test func aCopyKeepsWhatItHad() {
        var original = ChunkedArray<Int>()
        for value in 0..<(ChunkedArray<Int>.chunkSize * 2 + 3) { original.append(value) }
        let copy = original
        original[5] = -1
        original[original.count - 1] = -2
        original.append(-3)
        #expect(copy[5] == 5)
        #expect(copy[copy.count - 1] == copy.count - 1)
        #expect(copy.count == original.count - 1)
        #expect(original[5] == -1)
    }
}
