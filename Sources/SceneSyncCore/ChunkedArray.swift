/// An array stored in chunks of 1,024 elements.
///
/// The store keeps one entry per scene, and a hundred thousand entries are 9 MB. In one array, growing past a power
/// of two copied all of them into a buffer twice as large (so one scene more could cost 9 MB more), and changing one
/// entry of a store that a snapshot still held copied the whole array. In chunks, growing adds a chunk, at most one
/// chunk is reserved beyond the elements, and a change after a copy copies one chunk and the short list of chunks.
struct ChunkedArray<Element>: RandomAccessCollection, MutableCollection {
    private static var shift: Int { 10 }
    static var chunkSize: Int { 1 << shift }
    private static var mask: Int { chunkSize - 1 }

    /// Every chunk but the last is full; the last is not empty.
    private var chunks: [[Element]] = []
    private(set) var count = 0

    init() {}

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        get {
            precondition(position >= 0 && position < count, "index out of range")
            return chunks[position >> Self.shift][position & Self.mask]
        }
        _modify {
            precondition(position >= 0 && position < count, "index out of range")
            yield &chunks[position >> Self.shift][position & Self.mask]
        }
    }

    mutating func append(_ element: Element) {
        if count & Self.mask == 0 {
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    @discardableResult
    mutating func removeLast() -> Element {
        precondition(count > 0, "removeLast from an empty ChunkedArray")
        let element = chunks[chunks.count - 1].removeLast()
        count -= 1
        if chunks[chunks.count - 1].isEmpty { chunks.removeLast() }
        return element
    }

    /// Room in the list of chunks; the chunks themselves are made when they are needed.
    mutating func reserveCapacity(_ capacity: Int) {
        chunks.reserveCapacity((capacity + Self.mask) >> Self.shift)
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}
