import Testing

@testable import SceneSyncCore

@Suite("JSONValue and JSONWriter")
struct JSONValueTests {
    @Test(
        "semantically equal texts compare equal and hash alike",
        arguments: [
            (#"{"a":1,"b":2}"#, #"{"b":2,"a":1}"#), ("1", "1.0"), ("1", "1e0"), ("1", "10e-1"), ("1", "1E+0"),
            ("1.0", "10e-1"), ("100", "1e2"), ("100", "1.00e2"), ("0.001", "1e-3"), ("0", "-0"), ("0", "0.000"),
            ("0", "0e99"), ("-1.5", "-15e-1"), ("123456789012345678901234567890", "1.2345678901234567890123456789e29"),
            (#""\u0041""#, #""A""#), (#""\/""#, #""/""#), (#""\u00e9""#, "\"é\""), (" [1, 2] ", "[1,2]"),
            (
                #"{"a":{"x":1,"y":[1.0,{"q":true,"p":null}]},"b":[]}"#,
                #"{ "b" : [ ] , "a" : {"y":[1,{"p":null,"q":true}],"x":1e0}}"#
            ),
            (#"{"a":1,"a":2}"#, #"{"a":2}"#),
        ])
    func equal(_ left: String, _ right: String) throws {
        let l = try parseJSON(utf8(left))
        let r = try parseJSON(utf8(right))
        #expect(l == r)
        #expect(r == l)
        #expect(l.hashValue == r.hashValue)
    }

    @Test(
        "different values compare unequal",
        arguments: [
            ("1", #""1""#), ("1", "2"), ("1", "-1"), ("1", "1.0000000000000000000001"), ("0.1", "0.10000000000000001"),
            ("9007199254740993", "9007199254740992"), ("1e2", "1e3"), ("true", "1"), ("null", "false"), ("[]", "{}"),
            ("[1,2]", "[2,1]"), ("[1]", "[1,1]"), (#"{"a":1}"#, #"{"a":1,"b":2}"#), (#"{"a":1}"#, #"{"b":1}"#),
            (#"{"a":1,"b":2}"#, #"{"a":2,"b":1}"#), (#""a""#, #""A""#), ("[[]]", "[]"),
            ("1", "[1]"), ("1e1", "1"), (#"{"a":1,"b":2}"#, #"{"b":2,"a":2}"#),
            (#"{"id":7,"name":"x"}"#, #"{"id":7,"name":"y"}"#),
        ])
    func unequal(_ left: String, _ right: String) throws {
        let l = try parseJSON(utf8(left))
        let r = try parseJSON(utf8(right))
        #expect(l != r)
        #expect(r != l)
    }

    /// Exponents that do not fit an `Int`, or that overflow when the fraction or trailing zeros are folded in, must
    /// neither crash nor alias other numbers.
    @Test(
        "numbers with huge exponents compare safely",
        arguments: [
            ("1e99999999999999999999", "1"), ("1e-99999999999999999999", "1"), ("1.5e-9223372036854775808", "1.5"),
            ("10e9223372036854775807", "1"), ("1e9223372036854775807", "1"), ("1.5e9223372036854775807", "2"),
            ("1e99999999999999999999", "1e99999999999999999998"),
        ])
    func hugeExponents(_ left: String, _ right: String) throws {
        let l = try parseJSON(utf8(left))
        let r = try parseJSON(utf8(right))
        #expect(l != r)
        #expect(l == l)
        #expect(l == (try parseJSON(utf8(left))))
        _ = l.hashValue
        #expect(l.uint64Value == nil)
    }

    @Test("zero with a huge exponent is still zero")
    func hugeExponentZero() throws {
        #expect(try parseJSON(utf8("0e99999999999999999999")) == (try parseJSON(utf8("0"))))
        #expect(try parseJSON(utf8("0.0e-99999999999999999999")) == (try parseJSON(utf8("-0"))))
    }

    @Test("hashes are consistent with equality across many spellings")
    func hashing() throws {
        let spellings = ["12", "12.0", "1.2e1", "120e-1", "0.12e2", "1200E-2", "12.000"]
        let values = try spellings.map { try parseJSON(utf8($0)) }
        #expect(Set(values).count == 1)
        let objects = try [#"{"a":1,"b":[1,2]}"#, #"{"b":[1.0,2e0],"a":1}"#, #" { "a" : 1e0 , "b" : [ 1 , 2 ] } "#]
            .map { try parseJSON(utf8($0)) }
        #expect(Set(objects).count == 1)
        let distinct = try ["1", "2", #""1""#, "[1]", #"{"a":1}"#, "true", "null"].map { try parseJSON(utf8($0)) }
        #expect(Set(distinct).count == 7)
    }

    @Test(
        "serialization is compact and parses back to an equal value",
        arguments: [
            (" { \"a\" : [ 1 , 2.50 , \"x y\" ] , \"b\" : null } ", #"{"a":[1,2.50,"x y"],"b":null}"#),
            (#""\u00e9\/\n""#, "\"é/\\n\""), ("[ true , false ]", "[true,false]"), (#""\u0001""#, #""\u0001""#),
            ("\"a\\\"b\\\\c\"", "\"a\\\"b\\\\c\""), ("{}", "{}"), ("[]", "[]"), ("-0", "-0"),
        ])
    func serialization(_ json: String, _ expected: String) throws {
        let value = try parseJSON(utf8(json))
        #expect(text(value.serialized()) == expected)
        #expect(try JSONParser.parse(value.serialized()) == value)
    }

    @Test("JSONWriter escapes exactly what JSON requires")
    func writerEscapes() throws {
        var out: [UInt8] = []
        JSONWriter.appendString("a\"b\\c/d\n\r\t\u{08}\u{0C}\u{01}\u{1F}é🎈\u{7F}", to: &out)
        #expect(text(out) == "\"a\\\"b\\\\c/d\\n\\r\\t\\b\\f\\u0001\\u001fé🎈\u{7F}\"")
        #expect(try JSONParser.parse(out) == .string("a\"b\\c/d\n\r\t\u{08}\u{0C}\u{01}\u{1F}é🎈\u{7F}"))
    }

    @Test(
        "appendCompact removes whitespace outside strings only",
        arguments: [
            ("{\n  \"a b\" : [ 1 ,\t2 ]\r\n}", #"{"a b":[1,2]}"#), (#"" \" ""#, #"" \" ""#),
            (#"[ "\\" , " " ]"#, #"["\\"," "]"#),
            ("[1,2]", "[1,2]"), (#"{ "k" : "v\\\" x" }"#, #"{"k":"v\\\" x"}"#),
        ])
    func compact(_ json: String, _ expected: String) throws {
        var out: [UInt8] = []
        JSONWriter.appendCompact(utf8(json), to: &out)
        #expect(text(out) == expected)
        #expect(JSONWriter.hasInsignificantWhitespace(utf8(json)) == (json != expected))
        #expect(!JSONWriter.hasInsignificantWhitespace(out))
        #expect(try JSONParser.parse(out) == (try parseJSON(utf8(json))))
    }

    @Test("integers are written in decimal")
    func integers() {
        var out: [UInt8] = []
        JSONWriter.appendUInt(UInt64.max, to: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.appendInt(Int64.min, to: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.appendUInt(0, to: &out)
        for value: Int64 in [0, 7, -1, -10, 4242, Int64.max] {
            out.append(UInt8(ascii: ","))
            JSONWriter.appendInt(value, to: &out)
        }
        #expect(text(out) == "18446744073709551615,-9223372036854775808,0,0,7,-1,-10,4242,9223372036854775807")
        #expect(JSONNumber(UInt64(42)).text == "42")
        #expect(JSONNumber(Int64(-42)).description == "-42")
    }
}
