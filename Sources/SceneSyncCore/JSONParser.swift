/// A strict RFC 8259 JSON parser over raw bytes.
///
/// Scene files must round-trip byte for byte, so the parser reports where each value starts and ends instead of
/// only building a tree; the same parser also builds ``JSONValue`` trees for requests and snapshots. Nesting is
/// bounded (the outermost array or object is level 1) so that a hostile file or request line cannot exhaust the
/// stack.
public struct JSONParser: ~Copyable {
    /// Deepest nesting of arrays and objects the contract accepts anywhere.
    public static let defaultMaxNesting = 256

    let bytes: [UInt8]
    var index: Int
    let maxNesting: Int

    public init(_ bytes: [UInt8], maxNesting: Int = JSONParser.defaultMaxNesting) {
        self.bytes = bytes
        self.index = 0
        self.maxNesting = maxNesting
    }

    /// Parses one complete JSON text (surrounding whitespace allowed, nothing else).
    public static func parse(
        _ bytes: [UInt8], maxNesting: Int = JSONParser.defaultMaxNesting
    ) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes, maxNesting: maxNesting)
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        try parser.expectEnd()
        return value
    }

    /// Checks that `bytes` hold exactly one JSON text, without building a tree.
    public static func validate(
        _ bytes: some Collection<UInt8>, maxNesting: Int = JSONParser.defaultMaxNesting
    ) throws(JSONError) {
        var parser = JSONParser(Array(bytes), maxNesting: maxNesting)
        parser.skipWhitespace()
        try parser.skipValue(depth: 0)
        try parser.expectEnd()
    }

    // MARK: - Cursor

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func expectEnd() throws(JSONError) {
        skipWhitespace()
        if index != bytes.count { throw .unexpected(offset: index, "trailing characters after the JSON value") }
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func expect(_ byte: UInt8, _ what: String) throws(JSONError) {
        guard peek() == byte else { throw unexpected("expected \(what)") }
        index += 1
    }

    func unexpected(_ what: String) -> JSONError {
        index < bytes.count ? .unexpected(offset: index, what) : .truncated
    }

    // MARK: - Trees

    mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        guard let byte = peek() else { throw .truncated }
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < maxNesting else { throw .tooDeep(limit: maxNesting) }
            index += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "}") {
                index += 1
                return .object(JSONObject(members))
            }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw unexpected("expected an object key") }
                let key = try parseString()
                skipWhitespace()
                try expect(UInt8(ascii: ":"), "':'")
                skipWhitespace()
                let value = try parseValue(depth: depth + 1)
                members.append((key, value))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"), "',' or '}'")
                return .object(JSONObject(members))
            }
        case UInt8(ascii: "["):
            guard depth < maxNesting else { throw .tooDeep(limit: maxNesting) }
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipWhitespace()
                elements.append(try parseValue(depth: depth + 1))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"), "',' or ']'")
                return .array(elements)
            }
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            let start = index
            try skipNumber()
            return .number(JSONNumber(unchecked: String(decoding: bytes[start..<index], as: UTF8.self)))
        }
    }

    // MARK: - Skipping (validation without a tree)

    /// Skips one value, validating it. Returns whether it was a string, so callers scanning a top-level array can
    /// tell string elements apart without a second look.
    @discardableResult
    mutating func skipValue(depth: Int) throws(JSONError) -> Bool {
        guard let byte = peek() else { throw .truncated }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            try skipContainer(depth: depth)
            return false
        case UInt8(ascii: "\""):
            try skipString()
            return true
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        default: try skipNumber()
        }
        return false
    }

    /// Iterative so that depth is bounded by `maxNesting` only, never by the call stack.
    mutating func skipContainer(depth: Int) throws(JSONError) {
        // Each entry: true for an object, false for an array.
        var stack: [Bool] = []
        var afterValue = false
        while true {
            skipWhitespace()
            guard let byte = peek() else { throw .truncated }
            if !afterValue {
                // At the start of a value position that may be a container.
                if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
                    guard depth + stack.count < maxNesting else { throw .tooDeep(limit: maxNesting) }
                    let isObject = byte == UInt8(ascii: "{")
                    stack.append(isObject)
                    index += 1
                    skipWhitespace()
                    if peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        index += 1
                        stack.removeLast()
                        if stack.isEmpty { return }
                        afterValue = true
                        continue
                    }
                    if isObject { try skipObjectKey() }
                    continue
                }
                try skipScalar()
                afterValue = true
                continue
            }
            // After a value: ',' or the closer of the innermost container.
            guard let isObject = stack.last else { return }
            if byte == UInt8(ascii: ",") {
                index += 1
                if isObject { try skipObjectKey() }
                afterValue = false
                continue
            }
            try expect(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]"), isObject ? "',' or '}'" : "',' or ']'")
            stack.removeLast()
            if stack.isEmpty { return }
        }
    }

    mutating func skipObjectKey() throws(JSONError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { throw unexpected("expected an object key") }
        try skipString()
        skipWhitespace()
        try expect(UInt8(ascii: ":"), "':'")
    }

    mutating func skipScalar() throws(JSONError) {
        guard let byte = peek() else { throw .truncated }
        switch byte {
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        default: try skipNumber()
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw .truncated }
        let matches = literal.withUTF8Buffer { buffer in
            for offset in 0..<count where bytes[index + offset] != buffer[offset] { return false }
            return true
        }
        guard matches else { throw unexpected("invalid literal") }
        index += count
    }

    mutating func skipNumber() throws(JSONError) {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek() else { throw .truncated }
        if first == UInt8(ascii: "0") {
            index += 1
        } else if first >= UInt8(ascii: "1") && first <= UInt8(ascii: "9") {
            skipDigits()
        } else {
            index = start
            throw unexpected("expected a value")
        }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() > 0 else { throw unexpected("expected a digit after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() > 0 else { throw unexpected("expected a digit in the exponent") }
        }
    }

    @discardableResult
    mutating func skipDigits() -> Int {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index - start
    }

    // MARK: - Strings

    mutating func skipString() throws(JSONError) {
        try expect(UInt8(ascii: "\""), "'\"'")
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return
            }
            if byte < 0x20 { throw unexpected("control character in string") }
            if byte == UInt8(ascii: "\\") {
                index += 1
                guard let escaped = peek() else { throw .truncated }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                    UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    index += 1
                case UInt8(ascii: "u"):
                    index += 1
                    _ = try readHex4()
                default:
                    throw unexpected("invalid escape")
                }
                continue
            }
            if byte >= 0x80 {
                try skipUTF8Sequence()
                continue
            }
            index += 1
        }
        throw .truncated
    }

    /// Validates one multi-byte UTF-8 sequence, so invalid encodings are rejected rather than passed through.
    mutating func skipUTF8Sequence() throws(JSONError) {
        let lead = bytes[index]
        let length: Int
        let minimum: UInt32
        var scalar: UInt32
        switch lead {
        case 0xC2...0xDF:
            length = 2
            minimum = 0x80
            scalar = UInt32(lead & 0x1F)
        case 0xE0...0xEF:
            length = 3
            minimum = 0x800
            scalar = UInt32(lead & 0x0F)
        case 0xF0...0xF4:
            length = 4
            minimum = 0x10000
            scalar = UInt32(lead & 0x07)
        default: throw unexpected("invalid UTF-8")
        }
        guard index + length <= bytes.count else { throw .truncated }
        for offset in 1..<length {
            let continuation = bytes[index + offset]
            guard continuation & 0xC0 == 0x80 else { throw unexpected("invalid UTF-8") }
            scalar = scalar << 6 | UInt32(continuation & 0x3F)
        }
        guard scalar >= minimum, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else {
            throw unexpected("invalid UTF-8")
        }
        index += length
    }

    mutating func readHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw .truncated }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw unexpected("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    /// Decodes a string literal. Lone surrogates in escapes become U+FFFD rather than failing, as most JSON
    /// decoders do, so an item that other tools accept is not rejected here.
    mutating func parseString() throws(JSONError) -> String {
        let start = index
        try skipString()
        let literal = bytes[(start + 1)..<(index - 1)]
        if !literal.contains(UInt8(ascii: "\\")) {
            return String(decoding: literal, as: UTF8.self)
        }
        return JSONParser.unescape(literal)
    }

    /// Unescapes the inside of a string literal that has already been validated.
    static func unescape(_ literal: ArraySlice<UInt8>) -> String {
        String(decoding: unescapeBytes(literal), as: UTF8.self)
    }

    /// Unescapes the inside of a string literal that has already been validated, to UTF-8 bytes.
    static func unescapeBytes(_ literal: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(literal.count)
        var i = literal.startIndex
        func hex(_ at: Int) -> UInt32 {
            var value: UInt32 = 0
            for byte in literal[at..<(at + 4)] {
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
                default: digit = UInt32(byte &- UInt8(ascii: "A") &+ 10)
                }
                value = value << 4 | digit
            }
            return value
        }
        while i < literal.endIndex {
            let byte = literal[i]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                i += 1
                continue
            }
            let escaped = literal[i + 1]
            i += 2
            switch escaped {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex(i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar), i + 6 <= literal.endIndex, literal[i] == UInt8(ascii: "\\"),
                    literal[i + 1] == UInt8(ascii: "u")
                {
                    let low = hex(i + 2)
                    if (0xDC00...0xDFFF).contains(low) {
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                }
                let decoded = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                UTF8.encode(decoded) { out.append($0) }
            default: out.append(escaped)
            }
        }
        return out
    }
}

/// Why a JSON text was refused.
public enum JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    case truncated
    case unexpected(offset: Int, String)
    case tooDeep(limit: Int)

    public var description: String {
        switch self {
        case .truncated: "unexpected end of JSON"
        case .unexpected(let offset, let what): "\(what) at byte \(offset)"
        case .tooDeep(let limit): "JSON nested more than \(limit) levels"
        }
    }
}
