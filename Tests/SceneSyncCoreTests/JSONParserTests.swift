import Testing

@testable import SceneSyncCore

@Suite("JSONParser")
struct JSONParserTests {
    @Test(
        "valid JSON texts parse and validate",
        arguments: [
            "null", "true", "false", "0", "-0", "1", "-1", "1.5", "-1.5e10", "1E+2", "1e-2", "0.0", "\"\"",
            #""a\"b\\c\/d\b\f\n\r\t""#, #""\u0041\u00e9\uD83C\uDF88""#, "\"é🎈\"", "[]", "{}", " [ 1 , 2 ] ",
            "\t\r\n{\"a\" : [true, false, null]}\n", #"{"a":{"b":{"c":[]}}}"#, "\"\u{7F}\"",
            #"[1,"x",{"k":[]},[[]],-0.0e-0]"#,
        ])
    func validTexts(_ json: String) throws {
        try JSONParser.validate(utf8(json))
        _ = try JSONParser.parse(utf8(json))
    }

    @Test(
        "invalid JSON texts are refused by parse and validate",
        arguments: [
            "", " ", "nul", "nulll", "tru", "True", "[1,]", "[,1]", "[1 2]", "{\"a\"}", "{\"a\":}", "{\"a\":1,}",
            "{a:1}", "{'a':1}", "'a'", "01", "-01", "1.", ".1", "1e", "1e+", "+1", "-", "--1", "0x10", "NaN",
            "Infinity", "[1]]", "[1]x", "{}{}", "1 2", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "[",
            "{\"a\":1", "\"\u{01}\"", "\"a\tb\"", "\"a\nb\"", "[1,2", "\u{FEFF}[]",
        ])
    func invalidTexts(_ json: String) {
        #expect(throws: JSONError.self) { try JSONParser.validate(utf8(json)) }
        #expect(throws: JSONError.self) { try JSONParser.parse(utf8(json)) }
    }

    @Test(
        "invalid UTF-8 inside strings is refused",
        arguments: [
            [0x22, 0xFF, 0x22],  // never valid
            [0x22, 0x80, 0x22],  // lone continuation
            [0x22, 0xC3, 0x22],  // missing continuation
            [0x22, 0xC0, 0xAF, 0x22],  // overlong '/'
            [0x22, 0xE0, 0x80, 0xAF, 0x22],  // overlong 3-byte
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-16 surrogate
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],  // invalid lead
            [0x22, 0xE2, 0x82],  // truncated
        ] as [[UInt8]])
    func invalidUTF8(_ bytes: [UInt8]) {
        #expect(throws: JSONError.self) { try JSONParser.validate(bytes) }
        #expect(throws: JSONError.self) { try JSONParser.parse(bytes) }
    }

    @Test("valid multi-byte UTF-8 is accepted and decoded")
    func validUTF8() throws {
        let bytes: [UInt8] = [0x22, 0xC3, 0xA9, 0xE2, 0x82, 0xAC, 0xF0, 0x9F, 0x8E, 0x88, 0x22]
        try JSONParser.validate(bytes)
        #expect(try JSONParser.parse(bytes) == .string("é€🎈"))
    }

    @Test("errors say what went wrong")
    func errorKinds() {
        #expect(throws: JSONError.truncated) { try JSONParser.parse(utf8("[1,")) }
        #expect(throws: JSONError.truncated) { try JSONParser.parse(utf8("\"abc")) }
        #expect(throws: JSONError.truncated) { try JSONParser.validate(utf8("{\"a\":[")) }
        #expect(throws: JSONError.unexpected(offset: 3, "trailing characters after the JSON value")) {
            try JSONParser.parse(utf8("[1]x"))
        }
        #expect(throws: JSONError.unexpected(offset: 4, "trailing characters after the JSON value")) {
            try JSONParser.validate(utf8("[1] ]"))
        }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.parse(utf8(nestedArrays(257))) }
        #expect(JSONError.truncated.description == "unexpected end of JSON")
        #expect(JSONError.tooDeep(limit: 256).description == "JSON nested more than 256 levels")
        #expect(JSONError.unexpected(offset: 7, "invalid literal").description == "invalid literal at byte 7")
    }

    // MARK: - Nesting

    @Test("256 levels are accepted, 257 refused (arrays, objects, mixed)", arguments: [1, 2, 255, 256])
    func nestingLimit(_ levels: Int) throws {
        try JSONParser.validate(utf8(nestedArrays(levels)))
        _ = try JSONParser.parse(utf8(nestedArrays(levels)))
        try JSONParser.validate(utf8(nestedObjects(levels)))
        _ = try JSONParser.parse(utf8(nestedObjects(levels)))
    }

    @Test("more than 256 levels are refused", arguments: [257, 258, 1000])
    func tooDeep(_ levels: Int) {
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.validate(utf8(nestedArrays(levels))) }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.parse(utf8(nestedArrays(levels))) }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.validate(utf8(nestedObjects(levels))) }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.parse(utf8(nestedObjects(levels))) }
    }

    @Test("mixed arrays and objects count alike, with values around them")
    func mixedNesting() throws {
        // 128 × `[{"k":` = 256 levels.
        let open = String(repeating: #"[1,{"k":"#, count: 128)
        let close = String(repeating: "}]", count: 128)
        try JSONParser.validate(utf8(open + "0" + close))
        _ = try JSONParser.parse(utf8(open + "0" + close))
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.validate(utf8(open + "[]" + close)) }
        // A closer of the wrong kind is refused at every depth, past the first 64 levels too.
        for wrong in [0, 20, 100, 127] {
            var closers = Array(repeating: "}]", count: 128)
            closers[wrong] = "]}"
            #expect(throws: JSONError.self) { try JSONParser.validate(utf8(open + "0" + closers.joined())) }
        }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.parse(utf8(open + "[]" + close)) }
    }

    @Test("a custom nesting limit is honoured")
    func customNesting() throws {
        try JSONParser.validate(utf8("[[1]]"), maxNesting: 2)
        #expect(throws: JSONError.tooDeep(limit: 2)) { try JSONParser.validate(utf8("[[[1]]]"), maxNesting: 2) }
        #expect(throws: JSONError.tooDeep(limit: 2)) { try JSONParser.parse(utf8("[{\"a\":[]}]"), maxNesting: 2) }
        #expect(throws: JSONError.tooDeep(limit: 0)) { try JSONParser.parse(utf8("[]"), maxNesting: 0) }
        #expect(try JSONParser.parse(utf8("7"), maxNesting: 0) == .number(JSONNumber(7 as UInt64)))
    }

    @Test("hostile nesting is refused without exhausting the stack")
    func hostileNesting() {
        let deep = utf8(String(repeating: "[", count: 200_000))
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.validate(deep) }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.parse(deep) }
        let deepObjects = utf8(String(repeating: #"{"a":"#, count: 100_000))
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.validate(deepObjects) }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try JSONParser.parse(deepObjects) }
    }

    // MARK: - Trees

    @Test("parse builds the expected tree")
    func trees() throws {
        let value = try JSONParser.parse(utf8(#" {"a": [1, "x", true, false, null, {}], "b": {"c": -2.5e3}} "#))
        let a = try #require(value["a"]?.arrayValue)
        #expect(a.count == 6)
        #expect(a[0].uint64Value == 1)
        #expect(a[1].stringValue == "x")
        #expect(a[2].boolValue == true)
        #expect(a[3].boolValue == false)
        #expect(a[4] == .null)
        #expect(a[5].objectValue?.members.isEmpty == true)
        let c = try #require(value["b"]?["c"])
        guard case .number(let number) = c else {
            Issue.record("not a number: \(c)")
            return
        }
        #expect(number.text == "-2.5e3")
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value["missing"] == nil)
        #expect(JSONValue.string("x")["a"] == nil)
    }

    @Test(
        "string escapes are decoded",
        arguments: [
            (#""\"""#, "\""), (#""\\""#, "\\"), (#""\/""#, "/"), (#""\b\f\n\r\t""#, "\u{08}\u{0C}\n\r\t"),
            (#""\u0041""#, "A"), (#""\u00e9""#, "é"), (#""\u00E9""#, "é"), (#""\uD83C\uDF88""#, "🎈"),
            (#""\u0000""#, "\u{0}"), (#""\uD800""#, "\u{FFFD}"), (#""\uDC00x""#, "\u{FFFD}x"),
            (#""\uD800\u0041""#, "\u{FFFD}A"), (#""a\u0020b""#, "a b"), ("\"Zürich\"", "Zürich"),
        ])
    func escapes(_ json: String, _ expected: String) throws {
        #expect(try JSONParser.parse(utf8(json)) == .string(expected))
    }

    @Test("integer accessors are exact")
    func integers() throws {
        #expect(try JSONParser.parse(utf8("18446744073709551615")).uint64Value == UInt64.max)
        #expect(try JSONParser.parse(utf8("18446744073709551616")).uint64Value == nil)
        #expect(try JSONParser.parse(utf8("3.0")).uint64Value == 3)
        #expect(try JSONParser.parse(utf8("3e2")).uint64Value == 300)
        #expect(try JSONParser.parse(utf8("3.5")).uint64Value == nil)
        #expect(try JSONParser.parse(utf8("-3")).uint64Value == nil)
        #expect(try JSONParser.parse(utf8("0e5")).uint64Value == 0)
        #expect(try JSONParser.parse(utf8("-0")).uint64Value == 0)
        #expect(try JSONParser.parse(utf8("1e25")).uint64Value == nil)
        #expect(try JSONParser.parse(utf8("\"3\"")).uint64Value == nil)
        #expect(try JSONParser.parse(utf8("-3")).int64Value == -3)
        #expect(try JSONParser.parse(utf8("-9223372036854775808")).int64Value == Int64.min)
        #expect(try JSONParser.parse(utf8("9223372036854775807")).int64Value == Int64.max)
        #expect(try JSONParser.parse(utf8("9223372036854775808")).int64Value == nil)
        #expect(try JSONParser.parse(utf8("-9223372036854775809")).int64Value == nil)
        #expect(try JSONParser.parse(utf8("-1.5")).int64Value == nil)
    }

    @Test("a repeated key keeps its last value")
    func repeatedKeys() throws {
        let value = try JSONParser.parse(utf8(#"{"a":1,"b":2,"a":3}"#))
        #expect(value["a"]?.uint64Value == 3)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value == (try JSONParser.parse(utf8(#"{"b":2,"a":3}"#))))
    }
}
