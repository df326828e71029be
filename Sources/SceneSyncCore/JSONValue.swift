/// A parsed JSON value whose equality is the contract's: object key order, whitespace and number spelling do not
/// matter (`1`, `1.0` and `1e0` are equal), and numbers are compared exactly, never through `Double`.
public enum JSONValue: Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let bool) = self { return bool }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The value as an exact unsigned integer, when it is one (`3`, `3.0` and `3e0` all are).
    public var uint64Value: UInt64? {
        if case .number(let number) = self { return number.uint64Value }
        return nil
    }

    public var int64Value: Int64? {
        guard case .number(let number) = self else { return nil }
        if let value = number.uint64Value { return value <= UInt64(Int64.max) ? Int64(value) : nil }
        if number.text.hasPrefix("-"),
            let magnitude = JSONNumber(unchecked: String(number.text.dropFirst())).uint64Value,
            magnitude <= UInt64(Int64.max) + 1
        {
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return nil
    }

    /// Compact serialization (no insignificant whitespace), suitable for one-line protocol messages.
    public func serialized() -> [UInt8] {
        var out: [UInt8] = []
        serialize(into: &out)
        return out
    }

    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(literal: "null")
        case .bool(let value): out.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let number): out.append(contentsOf: number.text.utf8)
        case .string(let string): JSONWriter.appendString(string, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                element.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (offset, member) in object.members.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                JSONWriter.appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                member.value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}

/// An object that keeps its members in the order they were written (for output) but compares as an unordered map.
/// A repeated key keeps its last value, as most JSON decoders do.
public struct JSONObject: Sendable, Equatable, Hashable {
    public private(set) var members: [(key: String, value: JSONValue)]

    public init(_ members: [(String, JSONValue)]) {
        var seen: [String: Int] = [:]
        var unique: [(key: String, value: JSONValue)] = []
        unique.reserveCapacity(members.count)
        for (key, value) in members {
            if let existing = seen[key] {
                unique[existing].value = value
            } else {
                seen[key] = unique.count
                unique.append((key, value))
            }
        }
        self.members = unique
    }

    public subscript(key: String) -> JSONValue? {
        members.first(where: { $0.key == key })?.value
    }

    public var keys: [String] { members.map(\.key) }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        // The common case, two spellings of one type: the same keys in the same order. Keys never repeat (``init(_:)``
        // keeps a repeated key's last value), so the values decide, pair by pair, with no table built.
        if zip(lhs.members, rhs.members).allSatisfy({ $0.key == $1.key }) {
            return zip(lhs.members, rhs.members).allSatisfy { $0.value == $1.value }
        }
        let right = Dictionary(rhs.members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        return lhs.members.allSatisfy { right[$0.key] == $0.value }
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine member hashes commutatively.
        var combined = 0
        for member in members {
            var memberHasher = Hasher()
            memberHasher.combine(member.key)
            memberHasher.combine(member.value)
            combined ^= memberHasher.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

/// A JSON number kept as written, compared by exact decimal value.
public struct JSONNumber: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The number as it was written.
    public let text: String

    /// `text` must already be a valid JSON number.
    init(unchecked text: String) { self.text = text }

    public init(_ value: UInt64) { self.text = String(value) }
    public init(_ value: Int64) { self.text = String(value) }

    public var description: String { text }

    /// Sign, significant digits without leading or trailing zeros, and the decimal exponent of the last digit;
    /// `nil` when that exponent does not fit an `Int` (such numbers only compare equal to the same spelling).
    var canonical: (negative: Bool, digits: Substring, exponent: Int)? {
        var text = Substring(text)
        var negative = false
        if text.first == "-" {
            negative = true
            text = text.dropFirst()
        }
        var exponentText: Substring? = nil
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponentText = text[text.index(after: e)...].replacingOccurrences(plus: true)
            text = text[..<e]
        }
        var digits = ""
        var fractionCount = 0
        if let dot = text.firstIndex(of: ".") {
            let fraction = text[text.index(after: dot)...]
            fractionCount = fraction.count
            digits = String(text[..<dot]) + fraction
        } else {
            digits = String(text)
        }
        var significant = Substring(digits).drop(while: { $0 == "0" })
        if significant.isEmpty { return (false, "", 0) }
        var trailingZeros = 0
        while significant.last == "0" {
            significant = significant.dropLast()
            trailingZeros += 1
        }
        // Exponents are unbounded in JSON: one that does not fit, or that overflows once the fraction and the
        // trailing zeros are folded in, has no canonical form here rather than a wrong one (or a trap).
        var written = 0
        if let exponentText {
            guard let parsed = Int(exponentText) else { return nil }
            written = parsed
        }
        let (shifted, underflow) = written.subtractingReportingOverflow(fractionCount)
        let (exponent, overflow) = shifted.addingReportingOverflow(trailingZeros)
        if underflow || overflow { return nil }
        return (negative, significant, exponent)
    }

    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        if lhs.text == rhs.text { return true }
        guard let left = lhs.canonical, let right = rhs.canonical else { return false }
        return left == right
    }

    public func hash(into hasher: inout Hasher) {
        guard let canonical = self.canonical else {
            hasher.combine(text)
            return
        }
        hasher.combine(canonical.negative)
        hasher.combine(canonical.digits)
        hasher.combine(canonical.exponent)
    }

    /// The exact unsigned integer this number denotes, if it is one that fits.
    public var uint64Value: UInt64? {
        if let direct = UInt64(text) { return direct }
        guard let canonical = self.canonical else { return nil }
        if canonical.digits.isEmpty { return 0 }
        guard !canonical.negative, canonical.exponent >= 0, canonical.exponent <= 20 else { return nil }
        return UInt64(String(canonical.digits) + String(repeating: "0", count: canonical.exponent))
    }
}

extension Substring {
    /// Exponents may carry an explicit `+`, which `Int.init` rejects.
    fileprivate func replacingOccurrences(plus: Bool) -> Substring {
        first == "+" ? dropFirst() : self
    }
}
