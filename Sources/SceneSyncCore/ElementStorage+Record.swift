extension ElementStorage {
    /// Where one element's parts lie in its storage, read once from the record's lengths.
    ///
    /// Kept apart from ``Element`` (which also holds the storage) so that a whole path can be walked, and written
    /// as a file, straight from the buffer: a snapshot of a hundred thousand scenes then builds no element array and
    /// retains no buffer per element.
    struct Record: Sendable {
        /// A count that is absent: no tag, no kept literal.
        static let none = UInt32.max

        let start: UInt32
        /// Where the tag starts; the item and the literals follow.
        let dataStart: UInt32
        /// `none` when there is no tag.
        let tagCount: UInt32
        let itemCount: UInt32
        /// `none` when no item literal is kept.
        let literalCount: UInt32
        /// `none` when no tag literal is kept.
        let tagLiteralCount: UInt32

        /// Reads the record at `start` of a buffer whose bytes begin at `bytes`.
        init(at start: Int, in bytes: UnsafePointer<UInt8>) {
            var offset = start
            let tag = UInt32(Record.length(bytes, at: &offset))
            let item = UInt32(Record.length(bytes, at: &offset))
            let literals = Record.length(bytes, at: &offset)
            let literal = UInt32(literals >> 1)
            let tagLiteral = literals & 1 == 1 ? UInt32(Record.length(bytes, at: &offset)) : Record.none
            self.start = UInt32(start)
            self.dataStart = UInt32(offset)
            self.tagCount = tag == 0 ? Record.none : tag - 1
            self.itemCount = item
            self.literalCount = literal == 0 ? Record.none : literal - 1
            self.tagLiteralCount = tagLiteral
        }

        /// The LEB128 length at `offset`, which it moves past. A function of its own rather than a local closure
        /// over `offset`: every element read walks through here, and a captured variable may be boxed on the heap.
        private static func length(_ bytes: UnsafePointer<UInt8>, at offset: inout Int) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
        }

        var hasTag: Bool { tagCount != Record.none }
        var itemStart: UInt32 { dataStart + (hasTag ? tagCount : 0) }
        var literalStart: UInt32 { itemStart + itemCount }
        var tagLiteralStart: UInt32 { literalStart + (literalCount == Record.none ? 0 : literalCount) }
        var end: UInt32 { tagLiteralStart + (tagLiteralCount == Record.none ? 0 : tagLiteralCount) }

        /// The element as a scene file of `format` holds it (see ``SceneFileCodec/encode(_:as:)``): an array
        /// file's value, or a codable file's tag and item string literals, each as the file it came from spelled
        /// it when that differs from escaping it again.
        func appendFileEntry(as format: SceneFormat, from bytes: UnsafePointer<UInt8>, to out: inout [UInt8]) {
            func span(_ offset: UInt32, _ count: UInt32) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(start: bytes + Int(offset), count: count == Record.none ? 0 : Int(count))
            }
            let item = span(itemStart, itemCount)
            guard format == .codable else { return out.append(contentsOf: item) }
            out.append(UInt8(ascii: "\""))
            if tagLiteralCount != Record.none {
                out.append(contentsOf: span(tagLiteralStart, tagLiteralCount))
            } else {
                JSONWriter.appendEscaped(buffer: span(dataStart, hasTag ? tagCount : 0), to: &out)
            }
            // Byte by byte: an array literal here would be an allocation per element written.
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ","))
            out.append(UInt8(ascii: "\""))
            if literalCount != Record.none {
                out.append(contentsOf: span(literalStart, literalCount))
            } else {
                JSONWriter.appendEscaped(buffer: item, to: &out)
            }
            out.append(UInt8(ascii: "\""))
        }

        /// How many bytes ``appendFileEntry(as:from:to:)`` appends, counted without writing them.
        func fileEntryCount(as format: SceneFormat, from bytes: UnsafePointer<UInt8>) -> Int {
            guard format == .codable else { return Int(itemCount) }
            let tag =
                tagLiteralCount != Record.none
                ? Int(tagLiteralCount)
                : JSONWriter.escapedCount(
                    UnsafeBufferPointer(start: bytes + Int(dataStart), count: hasTag ? Int(tagCount) : 0))
            let item =
                literalCount != Record.none
                ? Int(literalCount)
                : JSONWriter.escapedCount(UnsafeBufferPointer(start: bytes + Int(itemStart), count: Int(itemCount)))
            return tag + item + 5
        }
    }

    /// ``SceneFileCodec/encode(_:as:)`` of these elements, appended to `out` straight from the records.
    func appendFile(as format: SceneFormat, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        withRecords(topFirst: format == .codable) { record, bytes, index in
            if index > 0 { out.append(UInt8(ascii: ",")) }
            record.appendFileEntry(as: format, from: bytes, to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// How many bytes ``appendFile(as:to:)`` appends.
    func fileByteCount(as format: SceneFormat) -> Int {
        var total = 2 + max(0, header.count - 1)
        withRecords(topFirst: false) { record, bytes, _ in total += record.fileEntryCount(as: format, from: bytes) }
        return total
    }

    /// Hands each record to `body` with the buffer's bytes and its position in the walk: root first, or, for a
    /// codable file, top of the stack first.
    private func withRecords(
        topFirst: Bool, _ body: (Record, UnsafePointer<UInt8>, Int) -> Void
    ) {
        let (count, byteCount) = (header.count, header.byteCount)
        buffer.withUnsafeMutablePointerToElements { mutableBytes in
            let bytes = UnsafePointer(mutableBytes)
            guard topFirst, count > 1 else {
                var offset = 0
                var index = 0
                while offset < byteCount {
                    let record = Record(at: offset, in: bytes)
                    body(record, bytes, index)
                    offset = Int(record.end)
                    index += 1
                }
                return
            }
            // Lengths come first in a record, so the records can only be read forwards: their starts are
            // collected on the stack, then walked backwards.
            withUnsafeTemporaryAllocation(of: Record.self, capacity: count) { records in
                var offset = 0
                for index in 0..<count {
                    let record = Record(at: offset, in: bytes)
                    records.initializeElement(at: index, to: record)
                    offset = Int(record.end)
                }
                for index in 0..<count { body(records[count - 1 - index], bytes, index) }
                _ = records.deinitialize()
            }
        }
    }
}
