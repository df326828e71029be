extension SceneID {
    /// Byte order, so that sorting matches what other tools (and `sort` with LC_ALL=C) produce.
    ///
    /// Compared eight bytes at a time on the IDs' own UTF-8 storage: sorting a hundred thousand IDs, as a snapshot
    /// or a `list` does, makes over a million comparisons, and the generic walk over two `UTF8View`s cost most of
    /// the sort.
    public static func < (lhs: SceneID, rhs: SceneID) -> Bool {
        let order = lhs.rawValue.utf8.withContiguousStorageIfAvailable { left in
            rhs.rawValue.utf8.withContiguousStorageIfAvailable { right in compareBytes(left, right) }
        }
        guard let order = order ?? nil else {
            // A string without contiguous UTF-8 (bridged from Objective-C): never one made here, but still ordered.
            return lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
        }
        return order < 0
    }

    /// Negative, zero or positive as `lhs` sorts before, with or after `rhs`: byte by byte, a prefix first.
    static func compareBytes(_ lhs: UnsafeBufferPointer<UInt8>, _ rhs: UnsafeBufferPointer<UInt8>) -> Int {
        let common = min(lhs.count, rhs.count)
        if common > 0, let left = lhs.baseAddress, let right = rhs.baseAddress {
            var offset = 0
            // Big-endian words compare like their bytes in order.
            while offset + 8 <= common {
                let a = UInt64(bigEndian: UnsafeRawPointer(left + offset).loadUnaligned(as: UInt64.self))
                let b = UInt64(bigEndian: UnsafeRawPointer(right + offset).loadUnaligned(as: UInt64.self))
                if a != b { return a < b ? -1 : 1 }
                offset += 8
            }
            while offset < common {
                if left[offset] != right[offset] { return Int(left[offset]) - Int(right[offset]) }
                offset += 1
            }
        }
        return lhs.count - rhs.count
    }

    /// The ID's first 16 bytes as two big-endian words, zero-padded, and its length: comparing these orders most
    /// IDs without reading them again (see ``SceneStore/slotsInIDOrder()``). An ID holds no zero byte, so the
    /// padding sorts a shorter ID before any longer one that starts with it, as byte order does.
    struct SortKey {
        var head: UInt64
        var tail: UInt64
        /// At most 128.
        var count: UInt8

        init(_ id: SceneID) {
            var words: (UInt64, UInt64) = (0, 0)
            let count = id.rawValue.utf8.withContiguousStorageIfAvailable { bytes in
                withUnsafeMutableBytes(of: &words) { raw in
                    let taken = min(bytes.count, 16)
                    if taken > 0, let base = bytes.baseAddress {
                        raw.copyMemory(from: UnsafeRawBufferPointer(start: base, count: taken))
                    }
                    return bytes.count
                }
            }
            if let count {
                self.count = UInt8(clamping: count)
            } else {
                let bytes = Array(id.rawValue.utf8)
                withUnsafeMutableBytes(of: &words) { raw in
                    for (offset, byte) in bytes.prefix(16).enumerated() { raw[offset] = byte }
                }
                self.count = UInt8(clamping: bytes.count)
            }
            head = UInt64(bigEndian: words.0)
            tail = UInt64(bigEndian: words.1)
        }

        /// Whether the keys alone decide the order of two different IDs: they do unless both are longer than 16
        /// bytes and share those 16.
        func decides(against other: SortKey) -> Bool {
            head != other.head || tail != other.tail || count <= 16 || other.count <= 16
        }

        /// The order of two different IDs when ``decides(against:)`` says the keys decide it.
        func precedes(_ other: SortKey) -> Bool {
            if head != other.head { return head < other.head }
            if tail != other.tail { return tail < other.tail }
            return count < other.count
        }
    }
}
