import SceneSyncTestKit
import Testing

@testable import SceneSyncCore

/// The shortcut of element equality: two plain texts (``JSONPlainText``) are equal values exactly when their bytes
/// are equal, so a `set` compares most elements with the current ones without parsing either.
@Suite struct JSONPlainTextTests {
    func isPlain(_ text: String) -> Bool {
        Array(text.utf8).withUnsafeBufferPointer(JSONPlainText.isPlain)
    }

    @Test(
        "texts that spell every value one way are plain",
        arguments: [
            "1", "-5", "120", #""abc def""#, "true", "null", "[]", "{}", #"{"a":[1,2,3]}"#, #"[{"a":1},{"b":2}]"#,
            #"{"detail":{"_0":42}}"#, "[0,-1,[true,false,null]]", #"{"a":1,"b":2}"#, #"{"id":7,"title":"Apple pie"}"#,
            #"{"":1,"a":{"x":[],"y":{}}}"#,
        ])
    func plain(_ text: String) {
        #expect(isPlain(text))
    }

    @Test(
        "texts with a second spelling of their value are not plain",
        arguments: [
            "1.0", "1e2", "1E2", "-0", "[-0]", #"{"b":2,"a":1}"#, #"[{"title":"x","id":1}]"#, #"{"a":1,"a":2}"#,
            #""\u0041""#, #""a\/b""#,
            "\"caf\u{E9}\"", "[1, 2]", " 1", "{\"a\":\n1}",
        ])
    func notPlain(_ text: String) {
        #expect(!isPlain(text))
    }

    /// Random values, each spelled many ways (numbers with fractions and exponents, escapes, composed and
    /// decomposed accents, whitespace, members in any order): wherever both texts of a pair are plain, their bytes
    /// decide equality exactly as the parsed values do, and elements compare as their parsed values do.
    @Test func plainTextsCompareAsTheirValues() throws {
        var random = SplitMix64(seed: 0x5CE7E)
        var texts: [String] = []
        for _ in 0..<60 {
            let value = RandomJSON.value(&random, depth: 0)
            for _ in 0..<6 { texts.append(RandomJSON.spell(value, &random)) }
        }
        var plainEqual = 0
        var plainUnequal = 0
        for (index, left) in texts.enumerated() {
            for right in texts[index...] {
                let leftValue = try parseJSON(utf8(left))
                let rightValue = try parseJSON(utf8(right))
                let equalValues = leftValue == rightValue
                #expect(try untyped(left) == untyped(right) || !equalValues, "\(left) vs \(right)")
                #expect(try untyped(left) != untyped(right) || equalValues, "\(left) vs \(right)")
                guard isPlain(left), isPlain(right) else { continue }
                #expect((left == right) == equalValues, "plain \(left) vs \(right)")
                if equalValues { plainEqual += 1 } else { plainUnequal += 1 }
            }
        }
        // The shortcut was taken both ways, not only skipped.
        #expect(plainEqual > 50)
        #expect(plainUnequal > 1000)
    }
}

/// A small random JSON value and its many spellings, for the test above.
enum RandomJSON {
    indirect enum Value {
        case number(Int)
        case string([String])
        case bool(Bool)
        case null
        case array([Value])
        case object([(String, Value)])
    }

    /// Characters of strings: ASCII, and an accent that has a composed and a decomposed spelling.
    static let characters = ["a", "b", "A", " ", "/", "\u{E9}"]

    static func value(_ random: inout SplitMix64, depth: Int) -> Value {
        switch random.below(depth >= 2 ? 4 : 6) {
        case 0: return .number([0, 1, 5, 10, -3, 100][random.below(6)])
        case 1: return .string((0..<random.below(3)).map { _ in characters[random.below(characters.count)] })
        case 2: return .bool(random.chance(50))
        case 3: return .null
        case 4: return .array((0..<random.below(3)).map { _ in value(&random, depth: depth + 1) })
        default:
            let keys = ["a", "b", "_0"].shuffled(using: &random).prefix(random.below(3))
            return .object(keys.map { ($0, value(&random, depth: depth + 1)) })
        }
    }

    static func spell(_ value: Value, _ random: inout SplitMix64) -> String {
        let space = random.chance(20) ? " " : ""
        switch value {
        case .number(let number):
            switch random.below(6) {
            case 0: return "\(number).0"
            case 1: return "\(number)e0"
            case 2: return number == 0 ? "-0" : "\(number)"
            default: return "\(number)"
            }
        case .string(let characters):
            let body = characters.map { character -> String in
                switch character {
                case "A" where random.chance(30): return "\\u0041"
                case "/" where random.chance(30): return "\\/"
                case "\u{E9}" where random.chance(50): return "e\u{301}"
                default: return character
                }
            }
            return "\"" + body.joined() + "\""
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let items):
            return "[" + space + items.map { spell($0, &random) }.joined(separator: "," + space) + "]"
        case .object(let members):
            let spelled = members.shuffled(using: &random).map { "\"\($0.0)\":" + space + spell($0.1, &random) }
            return "{" + spelled.joined(separator: ",") + "}"
        }
    }
}

/// The second shortcut: two texts with the same members in the same order (not sorted) and a scalar that differs
/// are different values, proven without a parse.
@Suite struct JSONPlainTextValuesTests {
    func differ(_ left: String, _ right: String) -> Bool {
        Array(left.utf8).withUnsafeBufferPointer { left in
            Array(right.utf8).withUnsafeBufferPointer { right in JSONPlainText.differInAValue(left, right) }
        }
    }

    @Test(
        "a scalar that differs where the members are the same proves different values",
        arguments: [
            (#"{"s":1,"f":0}"#, #"{"s":2,"f":0}"#),
            (#"{"b":{"y":[1,"x"]},"a":null}"#, #"{"b":{"y":[1,"z"]},"a":null}"#),
            ("1", "2"), ("true", "null"), (#""a""#, "3"), (#"[{"k":1},{"k":2}]"#, #"[{"k":1},{"k":3}]"#),
            (#"{"t":"x","id":10}"#, #"{"t":"x","id":1}"#),
        ])
    func proven(_ pair: (String, String)) {
        #expect(differ(pair.0, pair.1))
    }

    @Test(
        "anything else is left to a parse",
        arguments: [
            (#"{"s":1,"f":0}"#, #"{"f":0,"s":1}"#), (#"{"s":1,"f":0}"#, #"{"f":0,"s":2}"#),
            (#"{"a":1,"a":2}"#, #"{"a":3,"a":2}"#), (#"{"a":{"x":1,"x":2}}"#, #"{"a":{"x":0,"x":2}}"#),
            ("1", "1.0"), ("1", "1e0"), ("0", "-0"), (#""A""#, #""\u0041""#), ("[1]", "[1,2]"), ("[1]", "[[1]]"),
            (#"{"a":1}"#, #"{"b":1}"#), ("[1, 2]", "[1,3]"), (#"{"s":1}"#, #"{"s":1}"#), ("\"\u{E9}\"", #""e""#),
        ])
    func notProven(_ pair: (String, String)) {
        #expect(!differ(pair.0, pair.1))
    }

    /// Random values and versions of them with some scalars changed, written with their members in the order they
    /// were made (not sorted): whenever the shortcut says two differ, their parsed values differ, and it says so for
    /// most pairs whose values differ.
    @Test func provenPairsDifferAsParsedValues() throws {
        var random = SplitMix64(seed: 0xD1FF)
        var proven = 0
        var differing = 0
        for _ in 0..<3_000 {
            let value = RandomJSON.value(&random, depth: 0)
            let changed = Self.changeScalars(value, &random)
            let (left, right) = (Self.write(value), Self.write(changed))
            let unequal = try parseJSON(utf8(left)) != parseJSON(utf8(right))
            let shortcut = differ(left, right)
            #expect(!shortcut || unequal, "\(left) vs \(right)")
            if unequal { differing += 1 }
            if shortcut { proven += 1 }
        }
        #expect(proven > differing / 2, "proven \(proven) of \(differing) differing pairs")
    }

    /// `value` with some of its scalars replaced by others; its containers and keys as they were.
    static func changeScalars(_ value: RandomJSON.Value, _ random: inout SplitMix64) -> RandomJSON.Value {
        switch value {
        case .array(let items): return .array(items.map { changeScalars($0, &random) })
        case .object(let members): return .object(members.map { ($0.0, changeScalars($0.1, &random)) })
        default:
            guard random.chance(30) else { return value }
            return [.number(random.below(3)), .string(["a"]), .bool(true), .null][random.below(4)]
        }
    }

    /// `value` without whitespace, members in their order, strings as written (escaping nothing but what must be).
    static func write(_ value: RandomJSON.Value) -> String {
        switch value {
        case .number(let number): return "\(number)"
        case .string(let characters): return "\"" + characters.joined() + "\""
        case .bool(let flag): return flag ? "true" : "false"
        case .null: return "null"
        case .array(let items): return "[" + items.map(write).joined(separator: ",") + "]"
        case .object(let members):
            return "{" + members.map { "\"\($0.0)\":" + write($0.1) }.joined(separator: ",") + "}"
        }
    }
}
