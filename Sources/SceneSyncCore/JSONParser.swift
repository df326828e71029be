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
        // Each entry: true for an object, false for an array. Held in a word, not an array: every element of a
        // request's path and of a snapshot is skipped this way, and an array would cost an allocation each time.
        var stack = ContainerStack()
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
