/// Reads and writes scene files in both formats of §3, with the detection rule and every rejection it lists.
public struct SceneFileCodec: Sendable, Equatable {
    public var policy: FormatPolicy
    /// `scenes.max_file_bytes`.
    public var maxFileBytes: Int
    /// `scenes.max_depth`: the most elements a path may have.
    public var maxDepth: Int

    public init(policy: FormatPolicy = .auto, maxFileBytes: Int = 1 << 20, maxDepth: Int = 1024) {
        self.policy = policy
        self.maxFileBytes = maxFileBytes
        self.maxDepth = maxDepth
    }

    /// A scene file's content, understood.
    public struct Decoded: Sendable, Equatable {
        /// The path's elements, root first, packed as the store keeps them: a merge of an app's file hands them to
        /// the scene's state as they are, with no array of elements in between.
        var elements: ElementStorage
        /// The detected format; `nil` for an empty path, which keeps whatever format the scene had.
        public var format: SceneFormat?
        /// The file's exact bytes when they differ from ``SceneFileCodec/encode(_:as:)``'s output (pretty-printed
        /// files, unusual escapes), so that an unchanged scene is written back byte for byte.
        public var layout: [UInt8]?

        init(elements: ElementStorage, format: SceneFormat?, layout: [UInt8]? = nil) {
            self.elements = elements
            self.format = format
            self.layout = layout
        }

        /// Root first, whatever the file's order.
        public var path: [Element] {
            get { elements.elements }
            set { elements = ElementStorage.pack(newValue) }
        }

        public static func == (lhs: Decoded, rhs: Decoded) -> Bool {
            lhs.format == rhs.format && lhs.layout == rhs.layout && lhs.elements.hasSameElements(as: rhs.elements)
        }
    }

    public func decode(_ bytes: [UInt8]) throws(SceneFileError) -> Decoded {
        guard bytes.count <= maxFileBytes else { throw .tooLarge(bytes: bytes.count, limit: maxFileBytes) }
        let elements = try scanTopLevelArray(bytes)
        var decoded: Decoded
        // Whether `encode` gives back exactly these bytes; then no layout is kept.
        let canonical = SceneFileCodec.isCompact(bytes, elements)
        switch policy {
        case .array:
            decoded = Decoded(elements: arrayPath(bytes, elements), format: elements.isEmpty ? nil : .array)
        case .codable:
            decoded = Decoded(
                elements: try codablePath(bytes, elements, strict: true), format: elements.isEmpty ? nil : .codable)
        case .auto:
            // Why the file is not a codable path does not matter here: it is then read as an array path.
            if !elements.isEmpty, let path = try? codablePath(bytes, elements, strict: false) {
                decoded = Decoded(elements: path, format: .codable)
            } else {
                decoded = Decoded(elements: arrayPath(bytes, elements), format: elements.isEmpty ? nil : .array)
            }
        }
        // `max_depth` counts path elements: a codable file holds two entries per element.
        let depth = decoded.elements.header.count
        guard depth <= maxDepth else { throw .tooManyElements(count: depth, limit: maxDepth) }
        assert(canonical == (SceneFileCodec.encode(decoded.path, as: decoded.format ?? .array) == bytes))
        if !canonical { decoded.layout = bytes }
        return decoded
    }

    /// Whether the top-level array has no whitespace anywhere between its tokens: `[` then the values separated
    /// by single commas, then `]`. Array values are kept verbatim and codable tags and items keep their literal
    /// when escaping them again would differ, so such a file is exactly what `encode` writes.
    private static func isCompact(_ bytes: [UInt8], _ spans: [Span]) -> Bool {
        guard let first = spans.first, let last = spans.last else { return bytes.count == 2 }
        guard first.start == 1, last.end == bytes.count - 1 else { return false }
        for index in spans.indices.dropFirst() where spans[index].start != spans[index - 1].end + 1 { return false }
        return true
    }

    /// The file the daemon writes for a path: compact, like `JSONEncoder`'s default output, with every element's
    /// original bytes.
    public static func encode(_ path: [Element], as format: SceneFormat) -> [UInt8] {
        var out: [UInt8] = []
        // Reserved before the first byte: an array literal here would be an allocation of its own.
        out.reserveCapacity(path.reduce(2) { $0 + Int($1.recordEnd - $1.recordStart) + 8 })
        out.append(UInt8(ascii: "["))
        // A codable file holds the top of the stack first.
        for offset in path.indices {
            if offset > 0 { out.append(UInt8(ascii: ",")) }
            let element = path[format == .codable ? path.count - 1 - offset : offset]
            element.storage.buffer.withUnsafeMutablePointerToElements {
                element.record.appendFileEntry(as: format, from: $0, to: &out)
            }
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// The size a path's file would have, for the `too_large` check, without building it.
    public static func encodedSize(_ path: [Element], as format: SceneFormat) -> Int {
        path.reduce(2 + max(0, path.count - 1)) { total, element in
            total
                + element.storage.buffer.withUnsafeMutablePointerToElements {
                    element.record.fileEntryCount(as: format, from: $0)
                }
        }
    }

    // MARK: - Scanning

    private struct Span {
        var start: Int
        var end: Int
        var isString: Bool
    }

    private func scanTopLevelArray(_ bytes: [UInt8]) throws(SceneFileError) -> [Span] {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "[") else {
            do throws(JSONError) {
                try JSONParser.validate(bytes)
            } catch {
                throw .invalidJSON(error)
            }
            throw .notAnArray
        }
        var spans: [Span] = []
        spans.reserveCapacity(16)
        var overLimit = false
        // Up to two entries per element (codable); which format the file has is only known after the scan.
        let maxEntries = maxDepth > Int.max / 2 ? Int.max : maxDepth * 2
        do throws(JSONError) {
            parser.index += 1
            parser.skipWhitespace()
            if parser.peek() == UInt8(ascii: "]") {
                parser.index += 1
            } else {
                while true {
                    parser.skipWhitespace()
                    let start = parser.index
                    let isString = try parser.skipValue(depth: 1)
                    spans.append(Span(start: start, end: parser.index, isString: isString))
                    if spans.count > maxEntries {
                        // Keep validating so that a broken file is reported as broken, not as too deep.
                        overLimit = true
                        try parser.skipRemainingArray()
                        break
                    }
                    parser.skipWhitespace()
                    if parser.peek() == UInt8(ascii: ",") {
                        parser.index += 1
                        continue
                    }
                    try parser.expect(UInt8(ascii: "]"), "',' or ']'")
                    break
                }
            }
            try parser.expectEnd()
        } catch {
            throw .invalidJSON(error)
        }
        if overLimit { throw .tooManyElements(count: spans.count, limit: maxDepth) }
        return spans
    }

    private func arrayPath(_ bytes: [UInt8], _ spans: [Span]) -> ElementStorage {
        var builder = ElementStorage.Builder()
        builder.reserve(spans.reduce(0) { $0 + $1.end - $1.start + 3 })
        for span in spans { builder.append(tag: nil, item: bytes[span.start..<span.end], literal: nil) }
        return ElementStorage.make(builder)
    }

    /// Builds the root-first path of a codable file. With `strict` false (auto detection) any misfit throws so the
    /// caller falls back to an array path; with `strict` true the error says what is wrong.
    private func codablePath(
        _ bytes: [UInt8], _ spans: [Span], strict: Bool
    ) throws(SceneFileError) -> ElementStorage {
        guard spans.count % 2 == 0 else { throw .oddLength(count: spans.count) }
        if let index = spans.firstIndex(where: { !$0.isString }) { throw .notAString(index: index) }
        var builder = ElementStorage.Builder()
        builder.reserve(spans.reduce(0) { $0 + $1.end - $1.start })
        // Unescaped items, one at a time: an item of a codable file is a JSON text in a string, so nearly every
        // item has escapes (its quotes), and one buffer serves them all.
        var unescaped: [UInt8] = []
        // Room for the longest item at once, rather than growing through the first few.
        unescaped.reserveCapacity(spans.reduce(0) { max($0, $1.end - $1.start) })
        var pair = spans.count - 2
        while pair >= 0 {
            let tagSpan = spans[pair]
            let itemSpan = spans[pair + 1]
            let tagBody = bytes[(tagSpan.start + 1)..<(tagSpan.end - 1)]
            var tag = tagBody
            var tagLiteral: ArraySlice<UInt8>? = nil
            if tagBody.contains(UInt8(ascii: "\\")) {
                var unescapedTag: [UInt8] = []
                if !JSONParser.unescape(tagBody, appendingTo: &unescapedTag) { tagLiteral = tagBody }
                tag = unescapedTag[...]
            }
            if !strict, !SceneFileCodec.looksLikeTypeName(tag) { throw .notAString(index: pair) }
            let itemBody = bytes[(itemSpan.start + 1)..<(itemSpan.end - 1)]
            var item = itemBody
            var literal: ArraySlice<UInt8>? = nil
            do throws(JSONError) {
                if itemBody.contains(UInt8(ascii: "\\")) {
                    unescaped.removeAll(keepingCapacity: true)
                    if !JSONParser.unescape(itemBody, appendingTo: &unescaped) { literal = itemBody }
                    // The array itself, not a slice of it: the parser would copy a slice into an array of its own.
                    try JSONParser.validate(unescaped)
                    item = unescaped[...]
                } else {
                    try JSONParser.validate(item)
                }
            } catch {
                throw .invalidItem(index: pair + 1, error)
            }
            builder.append(tag: tag, item: item, literal: literal, tagLiteral: tagLiteral)
            pair -= 2
        }
        return ElementStorage.make(builder)
    }

    /// The auto-detection rule for tags: contains a `.` and starts with a letter or `_`.
    static func looksLikeTypeName(_ tag: ArraySlice<UInt8>) -> Bool {
        guard let first = tag.first, tag.contains(UInt8(ascii: ".")) else { return false }
        switch first {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"):
            return true
        case 0x80...: return String(decoding: tag, as: UTF8.self).first?.isLetter == true
        default: return false
        }
    }
}

extension JSONParser {
    /// After a value inside the top-level array: skips the rest of it, validating.
    mutating func skipRemainingArray() throws(JSONError) {
        while true {
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
                try skipValue(depth: 1)
                continue
            }
            try expect(UInt8(ascii: "]"), "',' or ']'")
            try expectEnd()
            return
        }
    }
}

/// Why a scene file was rejected. The scene keeps its last good state.
public enum SceneFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(bytes: Int, limit: Int)
    case tooManyElements(count: Int, limit: Int)
    case invalidJSON(JSONError)
    case notAnArray
    case oddLength(count: Int)
    case notAString(index: Int)
    case invalidItem(index: Int, JSONError)

    /// The `warning` event code subscribers see.
    public var warningCode: WarningCode {
        switch self {
        case .tooLarge, .tooManyElements: .fileTooLarge
        default: .invalidFile
        }
    }

    public var description: String {
        switch self {
        case .tooLarge(let bytes, let limit): "file is \(bytes) bytes, more than scenes.max_file_bytes (\(limit))"
        case .tooManyElements(let count, let limit):
            "path has \(count) or more elements, more than scenes.max_depth (\(limit))"
        case .invalidJSON(let error): "not valid JSON: \(error)"
        case .notAnArray: "not a JSON array"
        case .oddLength(let count): "codable path has an odd number of entries (\(count))"
        case .notAString(let index): "codable path entry \(index) is not a string"
        case .invalidItem(let index, let error): "codable item at entry \(index) is not valid JSON: \(error)"
        }
    }
}
