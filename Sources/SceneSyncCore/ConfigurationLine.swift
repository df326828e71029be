/// One line of the configuration file, read by the small YAML subset of
/// ``ScenesDirectory/configured(inConfigurationFile:)``.
///
/// A line is an optional run of `- ` (block sequence items), then `key: value`, `key:` or a value alone. A value
/// is a scalar (plain, `'single'` or `"double"` quoted) or a flow collection (`[…]`, `{…}`), each complete on the
/// line, a block scalar header (`|`, `>`), or nothing. What would make a value run on into the next lines, where
/// YAML may place them at any indentation (a quoted scalar or a flow collection left open), and what this reader
/// does not resolve (anchors, aliases, tags, complex keys, directives) is a ``ScenesDirectory/Problem``: the daemon's
/// parser could read more into such a file than this reader sees.
struct ConfigurationLine {
    /// A value as it stands on the line.
    enum Value: Equatable {
        /// Nothing, or a comment: a nested block, or a null.
        case empty
        /// A plain scalar; it may go on in more deeply indented lines.
        case plain(String)
        case quoted(String)
        /// A flow collection, complete on this line.
        case collection(FlowNode)
        /// `|` or `>`: the text is in the more deeply indented lines that follow.
        case blockScalar
    }

    /// A node of a flow collection.
    indirect enum FlowNode: Equatable {
        case null
        case scalar(String, quoted: Bool)
        case sequence
        case mapping([Pair])
    }

    struct Pair: Equatable {
        var key: String
        var value: FlowNode
    }

    /// The line's parts.
    struct Entry: Equatable {
        /// How many `- ` the line starts with.
        var sequenceItems: Int
        var key: String?
        var value: Value
    }

    private let bytes: [UInt8]
    private let number: Int
    private var index: Int

    /// `bytes` is the line without its line break; `start` is the first byte after the indentation.
    init(_ bytes: [UInt8], number: Int, start: Int) {
        self.bytes = bytes
        self.number = number
        self.index = start
    }

    /// Reads the whole line.
    mutating func entry() throws(ScenesDirectory.Problem) -> Entry {
        var items = 0
        while peek == UInt8(ascii: "-"), isBlank(at: index + 1) {
            items += 1
            index += 1
            skipBlanks()
        }
        let start = index
        if peek == UInt8(ascii: "[") || peek == UInt8(ascii: "{") {
            // A flow collection with no key before it; its own colons are not the line's.
            return Entry(sequenceItems: items, key: nil, value: try value())
        }
        if peek == UInt8(ascii: "\"") || peek == UInt8(ascii: "'") {
            let text = try quoted()
            skipBlanks()
            if peek == UInt8(ascii: ":"), isBlank(at: index + 1) {
                index += 1
                return Entry(sequenceItems: items, key: text, value: try value())
            }
            index = start
        } else if let colon = keyColon() {
            let key = String(decoding: bytes[start..<colon], as: UTF8.self)
            try checkPlainStart(at: start)
            index = colon + 1
            return Entry(sequenceItems: items, key: trimmed(key), value: try value())
        }
        return Entry(sequenceItems: items, key: nil, value: try value())
    }

    // MARK: - Block values

    private mutating func value() throws(ScenesDirectory.Problem) -> Value {
        skipBlanks()
        guard let byte = peek, byte != UInt8(ascii: "#") else { return .empty }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            let text = try quoted()
            try expectEnd()
            return .quoted(text)
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            let node = try collection()
            try expectEnd()
            return .collection(node)
        case UInt8(ascii: "|"), UInt8(ascii: ">"):
            index += 1
            while let next = peek, next == UInt8(ascii: "-") || next == UInt8(ascii: "+") || isDigit(next) {
                index += 1
            }
            try expectEnd()
            return .blockScalar
        default:
            try checkPlainStart(at: index)
            let start = index
            while index < bytes.count, !isCommentStart(at: index) { index += 1 }
            let text = trimmed(String(decoding: bytes[start..<index], as: UTF8.self))
            if keyColon(from: start) != nil {
                throw problem("a value holds \": \"; quote it")
            }
            return .plain(text)
        }
    }

    /// The position of the `:` that ends a plain key on this line (one followed by a blank or the end of the line,
    /// before any comment), if there is one.
    private func keyColon(from start: Int? = nil) -> Int? {
        var position = start ?? index
        while position < bytes.count, !isCommentStart(at: position) {
            if bytes[position] == UInt8(ascii: ":"), isBlank(at: position + 1) { return position }
            position += 1
        }
        return nil
    }

    /// YAML's indicators that cannot start a plain scalar (besides `-`, `?` and `:` before a blank, which are
    /// read as what they introduce); quotes and brackets are read before a plain scalar is tried.
    private static let indicators = Set("#%@`,[]{}|>\"'".utf8)

    /// Refuses the YAML indicators that cannot start a plain scalar, or start what this reader does not resolve.
    private func checkPlainStart(at position: Int) throws(ScenesDirectory.Problem) {
        guard position < bytes.count else { return }
        switch bytes[position] {
        case UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"):
            throw problem("anchors, aliases and tags are not read here; write the value itself")
        case UInt8(ascii: "?") where isBlank(at: position + 1):
            throw problem("complex keys (\"? \") are not read here")
        case let byte where Self.indicators.contains(byte):
            throw problem("a key or value cannot start with \"\(Character(UnicodeScalar(bytes[position])))\" here")
        default:
            return
        }
    }

    /// Only blanks or a comment may follow.
    private mutating func expectEnd() throws(ScenesDirectory.Problem) {
        skipBlanks()
        guard index < bytes.count, bytes[index] != UInt8(ascii: "#") else { return }
        throw problem("unexpected text after the value")
    }

    // MARK: - Flow collections

    /// A `[…]` or `{…}` that must close on this line.
    private mutating func collection() throws(ScenesDirectory.Problem) -> FlowNode {
        let isMapping = bytes[index] == UInt8(ascii: "{")
        let close = isMapping ? UInt8(ascii: "}") : UInt8(ascii: "]")
        index += 1
        var pairs: [Pair] = []
        while true {
            skipBlanks()
            guard let byte = peek, byte != UInt8(ascii: "#") || !isBlank(at: index - 1) else {
                throw problem("a flow collection (\"[\" or \"{\") must close on the line it opens")
            }
            if byte == close {
                index += 1
                break
            }
            let first = try flowNode()
            skipBlanks()
            var value = FlowNode.null
            if peek == UInt8(ascii: ":") {
                index += 1
                skipBlanks()
                if let next = peek, next != UInt8(ascii: ","), next != close { value = try flowNode() }
                skipBlanks()
            }
            if isMapping {
                guard case .scalar(let key, _) = first else {
                    throw problem("a key in a flow mapping must be a plain name")
                }
                pairs.append(Pair(key: key, value: value))
            }
            if peek == UInt8(ascii: ",") {
                index += 1
            } else if peek != close {
                throw problem("expected \",\" or \"\(Character(UnicodeScalar(close)))\" in a flow collection")
            }
        }
        return isMapping ? .mapping(pairs) : .sequence
    }

    private mutating func flowNode() throws(ScenesDirectory.Problem) -> FlowNode {
        guard let byte = peek else { throw problem("a flow collection must close on the line it opens") }
        switch byte {
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            return try collection()
        case UInt8(ascii: "\""), UInt8(ascii: "'"):
            return .scalar(try quoted(), quoted: true)
        case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"):
            return .null
        default:
            try checkPlainStart(at: index)
            let start = index
            while let next = peek, !isFlowIndicator(next), !isCommentStart(at: index) {
                if next == UInt8(ascii: ":"), isBlank(at: index + 1) || isFlowIndicator(at: index + 1) { break }
                index += 1
            }
            return .scalar(trimmed(String(decoding: bytes[start..<index], as: UTF8.self)), quoted: false)
        }
    }

    // MARK: - Quoted scalars

    private mutating func quoted() throws(ScenesDirectory.Problem) -> String {
        let quote = bytes[index]
        index += 1
        var text: [UInt8] = []
        while true {
            guard let byte = peek else {
                throw problem("a quoted value must close on the line it opens")
            }
            index += 1
            if byte == quote {
                // '' is a quote inside a single-quoted scalar.
                guard quote == UInt8(ascii: "'"), peek == quote else { break }
                index += 1
                text.append(quote)
            } else if byte == UInt8(ascii: "\\"), quote == UInt8(ascii: "\"") {
                try escape(into: &text)
            } else {
                text.append(byte)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A double-quoted scalar's escape, after its backslash.
    private mutating func escape(into text: inout [UInt8]) throws(ScenesDirectory.Problem) {
        guard let byte = peek else { throw problem("a quoted value must close on the line it opens") }
        index += 1
        let simple: [UInt8: UInt32] = [
            UInt8(ascii: "0"): 0, UInt8(ascii: "a"): 7, UInt8(ascii: "b"): 8, UInt8(ascii: "t"): 9, 9: 9,
            UInt8(ascii: "n"): 10, UInt8(ascii: "v"): 11, UInt8(ascii: "f"): 12, UInt8(ascii: "r"): 13,
            UInt8(ascii: "e"): 27, UInt8(ascii: " "): 32, UInt8(ascii: "\""): 34, UInt8(ascii: "/"): 47,
            UInt8(ascii: "\\"): 92, UInt8(ascii: "N"): 0x85, UInt8(ascii: "_"): 0xA0, UInt8(ascii: "L"): 0x2028,
            UInt8(ascii: "P"): 0x2029,
        ]
        let digits: [UInt8: Int] = [UInt8(ascii: "x"): 2, UInt8(ascii: "u"): 4, UInt8(ascii: "U"): 8]
        var code: UInt32
        if let value = simple[byte] {
            code = value
        } else if let count = digits[byte], index + count <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<index + count], as: UTF8.self), radix: 16)
        {
            index += count
            code = value
        } else {
            throw problem("\\\(Character(UnicodeScalar(byte))) is not an escape this reader knows")
        }
        guard let scalar = UnicodeScalar(code) else { throw problem("an escape names no Unicode character") }
        text.append(contentsOf: Array(String(Character(scalar)).utf8))
    }

    // MARK: - Bytes

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipBlanks() {
        while let byte = peek, byte == UInt8(ascii: " ") || byte == 9 { index += 1 }
    }

    /// A blank (space or tab) or the end of the line.
    private func isBlank(at position: Int) -> Bool {
        position >= bytes.count || bytes[position] == UInt8(ascii: " ") || bytes[position] == 9
    }

    /// A `#` at the start of the line's content or after a blank.
    private func isCommentStart(at position: Int) -> Bool {
        bytes[position] == UInt8(ascii: "#") && (position == 0 || isBlank(at: position - 1))
    }

    private func isFlowIndicator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: ",") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
            || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "}")
    }

    private func isFlowIndicator(at position: Int) -> Bool {
        position < bytes.count && isFlowIndicator(bytes[position])
    }

    private func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private func trimmed(_ text: String) -> String {
        String(text.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }

    private func problem(_ message: String) -> ScenesDirectory.Problem {
        ScenesDirectory.Problem(line: number, message)
    }
}
