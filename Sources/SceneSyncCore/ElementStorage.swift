/// The bytes of a path's elements in one allocation, shared by every ``Element`` of that path.
///
/// A daemon may hold a hundred thousand scenes; with an allocation (or two) per element plus an array per path, the
/// overhead dwarfed the scene files themselves. A scene now costs one buffer about the size of its file.
///
/// Each element is a record: unsigned LEB128 lengths — the tag's plus one (0: no tag), the item's, the item
/// literal's plus one (0: none kept) times two plus one if a tag literal is kept, then that tag literal's — then the
/// tag's UTF-8, the item's JSON text, the item literal's body and the tag literal's body. The flag rides in the item
/// literal's length so that the common element, with neither literal, still costs three bytes of lengths. The
/// buffer is never written after it is built, so sharing it across threads is safe.
struct ElementStorage: @unchecked Sendable {
    /// The one allocation: a header, then the records.
    final class Buffer: ManagedBuffer<Header, UInt8> {}

    /// Two 32-bit counts, so that the header of each of a hundred thousand buffers takes 8 bytes, not 16; records
    /// are addressed by 32-bit offsets already.
    struct Header {
        private let storedCount: UInt32
        private let storedByteCount: UInt32

        init(count: Int, byteCount: Int) {
            guard let count = UInt32(exactly: count), let byteCount = UInt32(exactly: byteCount) else {
                preconditionFailure("a path of \(count) elements in \(byteCount) bytes does not fit one buffer")
            }
            storedCount = count
            storedByteCount = byteCount
        }

        /// Records in the buffer.
        var count: Int { Int(storedCount) }
        /// Bytes used (the buffer may have more capacity).
        var byteCount: Int { Int(storedByteCount) }
    }

    /// Never mutated after `make` returns.
    let buffer: Buffer

    var header: Header { buffer.header }

    /// The storage of every empty path.
    static let empty = ElementStorage.make(Builder())

    /// Copies a builder's records into a buffer of exactly their size.
    static func make(_ builder: Builder) -> ElementStorage {
        let buffer = unsafeDowncast(
            Buffer.create(minimumCapacity: builder.bytes.count) { _ in
                Header(count: builder.count, byteCount: builder.bytes.count)
            }, to: Buffer.self)
        buffer.withUnsafeMutablePointerToElements { target in
            builder.bytes.withUnsafeBufferPointer { source in
                guard let base = source.baseAddress else { return }
                target.initialize(from: base, count: source.count)
            }
        }
        return ElementStorage(buffer: buffer)
    }

    /// Whether both are the same buffer.
    static func === (lhs: ElementStorage, rhs: ElementStorage) -> Bool { lhs.buffer === rhs.buffer }

    /// A storage holding exactly `elements`, in order: the elements' own storage when they are all of its records
    /// (a path as decoded from a file), a packed copy otherwise.
    static func pack(_ elements: [Element]) -> ElementStorage {
        guard let first = elements.first else { return empty }
        let candidate = first.storage
        if candidate.header.count == elements.count, first.recordStart == 0 {
            var expected = 0
            var whole = true
            for element in elements {
                guard element.storage === candidate, Int(element.recordStart) == expected else {
                    whole = false
                    break
                }
                expected = Int(element.recordEnd)
            }
            if whole, expected == candidate.header.byteCount { return candidate }
        }
        // Straight into a buffer of the exact size: the records' sizes are known, so no builder in between.
        let byteCount = elements.reduce(0) { $0 + Int($1.recordEnd - $1.recordStart) }
        let buffer = unsafeDowncast(
            Buffer.create(minimumCapacity: byteCount) { _ in Header(count: elements.count, byteCount: byteCount) },
            to: Buffer.self)
        buffer.withUnsafeMutablePointerToElements { target in
            var offset = 0
            for element in elements {
                let count = Int(element.recordEnd - element.recordStart)
                element.storage.withBytes(at: element.recordStart, count: element.recordEnd - element.recordStart) {
                    guard let base = $0.baseAddress else { return }
                    (target + offset).initialize(from: base, count: count)
                }
                offset += count
            }
        }
        return ElementStorage(buffer: buffer)
    }

    /// The elements, in order.
    var elements: [Element] {
        var result: [Element] = []
        result.reserveCapacity(header.count)
        forEach { result.append($0) }
        return result
    }

    /// Each element, in order, without an array of them.
    func forEach(_ body: (Element) -> Void) {
        let byteCount = header.byteCount
        buffer.withUnsafeMutablePointerToElements { base in
            var offset = 0
            while offset < byteCount {
                let element = Element(storage: self, recordStart: offset, bytes: base)
                offset = Int(element.recordEnd)
                body(element)
            }
        }
    }

    /// Whether both hold equal elements in the same order (SPEC §3's equality, element by element), walked in place.
    func hasSameElements(as other: ElementStorage) -> Bool {
        if self === other { return true }
        guard header.count == other.header.count else { return false }
        let (mine, theirs) = (header.byteCount, other.header.byteCount)
        return buffer.withUnsafeMutablePointerToElements { left in
            other.buffer.withUnsafeMutablePointerToElements { right in
                var (leftOffset, rightOffset) = (0, 0)
                while leftOffset < mine, rightOffset < theirs {
                    let lhs = Element(storage: self, recordStart: leftOffset, bytes: left)
                    let rhs = Element(storage: other, recordStart: rightOffset, bytes: right)
                    guard lhs == rhs else { return false }
                    (leftOffset, rightOffset) = (Int(lhs.recordEnd), Int(rhs.recordEnd))
                }
                return true
            }
        }
    }

    /// Runs `body` over `count` bytes at `offset`.
    func withBytes<R>(at offset: UInt32, count: UInt32, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R
    {
        try buffer.withUnsafeMutablePointerToElements { base in
            try body(UnsafeBufferPointer(start: base + Int(offset), count: Int(count)))
        }
    }

    /// Bytes held, for memory accounting.
    var retainedBytes: Int { header.byteCount }

    // MARK: - Building

    /// Accumulates records before they are copied into a buffer of the right size.
    struct Builder {
        var bytes: [UInt8] = []
        var count = 0

        mutating func reserve(_ capacity: Int) { bytes.reserveCapacity(capacity) }

        mutating func append(
            tag: ArraySlice<UInt8>?, item: ArraySlice<UInt8>, literal: ArraySlice<UInt8>?,
            tagLiteral: ArraySlice<UInt8>? = nil
        ) {
            appendLength(tag.map { $0.count + 1 } ?? 0)
            appendLength(item.count)
            appendLength((literal.map { $0.count + 1 } ?? 0) << 1 | (tagLiteral == nil ? 0 : 1))
            if let tagLiteral { appendLength(tagLiteral.count) }
            if let tag { bytes.append(contentsOf: tag) }
            bytes.append(contentsOf: item)
            if let literal { bytes.append(contentsOf: literal) }
            if let tagLiteral { bytes.append(contentsOf: tagLiteral) }
            count += 1
        }

        private mutating func appendLength(_ value: Int) {
            var value = UInt(value)
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }
    }
}
