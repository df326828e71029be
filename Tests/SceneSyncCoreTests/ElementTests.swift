import Testing

@testable import SceneSyncCore

@Suite("Element")
struct ElementTests {
    @Test(
        "elements with equal tags and JSON-equal values are equal",
        arguments: [
            (#"{"a":1,"b":2}"#, #"{"b":2,"a":1}"#), ("1", "1.0"), ("1", "1e0"), ("1", "10e-1"), ("1.0", "1e0"),
            (#""\u0041""#, #""A""#), (#"{"url":"https:\/\/x"}"#, #"{"url":"https://x"}"#), ("[ 1 ,2 ]", "[1,2]"),
            ("{\n  \"applePie\" : {\n\n  }\n}", #"{"applePie":{}}"#), ("42", "42"),
        ])
    func equal(_ left: String, _ right: String) throws {
        #expect(try typed("MyApp.Recipe", left) == (try typed("MyApp.Recipe", right)))
        #expect(try untyped(left) == (try untyped(right)))
    }

    @Test(
        "elements with different values are unequal",
        arguments: [("1", #""1""#), ("1", "2"), (#"{"a":1}"#, #"{"a":"1"}"#), ("[1,2]", "[2,1]"), ("null", "false")])
    func unequalValues(_ left: String, _ right: String) throws {
        #expect(try typed("MyApp.Recipe", left) != (try typed("MyApp.Recipe", right)))
        #expect(try untyped(left) != (try untyped(right)))
    }

    @Test("different tags, or a tag against none, are unequal")
    func unequalTags() throws {
        #expect(try typed("MyApp.Recipe", "1") != (try typed("MyApp.Other", "1")))
        #expect(try typed("MyApp.Recipe", "1") != (try typed("myapp.recipe", "1")))
        #expect(try typed("Swift.Int", "1") != (try untyped("1")))
        #expect(try untyped("1") != (try typed("Swift.Int", "1")))
    }

    @Test("the item literal does not take part in equality")
    func literalIgnored() throws {
        let plain = Element(tag: "MyApp.Link", item: utf8(#"{"url":"https:\/\/x"}"#))
        let literal = Element(
            tag: "MyApp.Link", item: utf8(#"{"url":"https:\/\/x"}"#),
            itemLiteral: utf8(#"{\"url\":\"https:\\\/\\\/x\"}"#))
        #expect(plain == literal)
    }

    @Test("init(tag:json:) validates the item")
    func validation() throws {
        #expect(throws: JSONError.self) { try Element(tag: nil, json: utf8("{")) }
        #expect(throws: JSONError.self) { try Element(tag: nil, json: utf8("")) }
        #expect(throws: JSONError.self) { try Element(tag: "A.B", json: utf8("[1] 2")) }
        #expect(throws: JSONError.tooDeep(limit: 256)) { try Element(tag: nil, json: utf8(nestedArrays(257))) }
        let element = try Element(tag: "Swift.Int", json: utf8(" 42 "))
        #expect(element.item == utf8(" 42 "))
        #expect(element.value == .number(JSONNumber(UInt64(42))))
        #expect(element.tag == "Swift.Int")
    }

    @Test("init(tag:value:) stores the compact serialization")
    func fromValue() throws {
        let value = try parseJSON(utf8(#" { "emoji" : "🎈" , "count" : 99 } "#))
        let element = Element(tag: "NavigationBackportApp.EmojiVisualisation", value: value)
        #expect(text(element.item) == #"{"emoji":"🎈","count":99}"#)
        #expect(element.value == value)
        #expect(element.description == #"NavigationBackportApp.EmojiVisualisation({"emoji":"🎈","count":99})"#)
        #expect(Element(tag: nil, value: .bool(true)).description == "true")
    }

    @Test("the wire form is one compact line and keeps the item's bytes otherwise")
    func wire() throws {
        var out: [UInt8] = []
        try typed("MyApp.Recipe", "{\n  \"applePie\" : {\n\n  },\n  \"note\" : \"a  b\"\n}").appendWire(to: &out)
        #expect(text(out) == #"{"type":"MyApp.Recipe","value":{"applePie":{},"note":"a  b"}}"#)
        out = []
        try untyped(#"{"n":1.50,"s":"\/"}"#).appendWire(to: &out)
        #expect(text(out) == #"{"value":{"n":1.50,"s":"\/"}}"#)
        out = []
        try typed("Ty\"pe.X", "1").appendWire(to: &out)
        #expect(text(out) == #"{"type":"Ty\"pe.X","value":1}"#)
    }
}

@Suite("SceneFormat and FormatPolicy")
struct SceneFormatTests {
    @Test("the format of a path follows its elements")
    func formatOf() throws {
        #expect(SceneFormat.of([]) == nil)
        #expect(SceneFormat.of([try typed("A.B", "1"), try typed("C.D", "2")]) == .codable)
        #expect(SceneFormat.of([try untyped("1"), try untyped("2")]) == .array)
        #expect(SceneFormat.of([try typed("A.B", "1"), try untyped("2")]) == nil)
        #expect(SceneFormat.of([try untyped("1"), try typed("A.B", "2")]) == nil)
    }

    @Test("policies and their pinned formats")
    func policies() {
        #expect(FormatPolicy.auto.pinned == nil)
        #expect(FormatPolicy.codable.pinned == .codable)
        #expect(FormatPolicy.array.pinned == .array)
        #expect(FormatPolicy(rawValue: "auto") == .auto)
        #expect(FormatPolicy(rawValue: "Auto") == nil)
        #expect(SceneFormat.allCases.map(\.rawValue) == ["codable", "array"])
    }
}

@Suite("Element storage")
struct ElementStorageTests {
    @Test("records of every size keep their bytes", arguments: [0, 1, 126, 127, 128, 16_383, 16_384, 200_000])
    func sizes(_ size: Int) throws {
        let long = "\"" + String(repeating: "é", count: size / 2) + String(repeating: "x", count: size % 2) + "\""
        let tag = "My.T" + String(repeating: "a", count: size)
        let element = Element(tag: tag, item: utf8(long), itemLiteral: size == 0 ? nil : utf8("\\" + long))
        #expect(element.tag == tag)
        #expect(element.item == utf8(long))
        #expect(element.itemLiteral == (size == 0 ? nil : utf8("\\" + long)))
        let untypedElement = Element(tag: nil, item: utf8(long))
        #expect(untypedElement.tag == nil)
        #expect(untypedElement.item == utf8(long))
        #expect(untypedElement.itemLiteral == nil)
        // Packed together and read back.
        let state = SceneState(
            id: try sceneID("s"), version: 1, created: 1, modified: 1, format: .codable,
            path: [element, try typed("A.b", "1"), element])
        #expect(state.path.map(\.tag) == [tag, "A.b", tag])
        #expect(state.path.map(\.item) == [utf8(long), utf8("1"), utf8(long)])
        #expect(state.path[2].itemLiteral == element.itemLiteral)
    }

    @Test(
        "tag literals of every size keep their bytes, with and without an item literal",
        arguments: [0, 1, 62, 63, 64, 127, 128, 16_384, 200_000])
    func tagLiteralSizes(_ size: Int) throws {
        let tag = "My.T" + String(repeating: "/", count: size)
        let tagLiteral = utf8("My.T" + String(repeating: "\\/", count: size))
        let item = utf8("\"" + String(repeating: "x", count: size) + "\"")
        let itemLiteral = utf8("\\\"" + String(repeating: "\\u0078", count: size) + "\\\"")
        let both = Element(tag: tag, item: item, itemLiteral: itemLiteral, tagLiteral: tagLiteral)
        let tagOnly = Element(tag: tag, item: item, tagLiteral: tagLiteral)
        for element in [both, tagOnly] {
            #expect(element.tag == tag)
            #expect(element.item == item)
            #expect(element.tagLiteral == tagLiteral)
        }
        #expect(both.itemLiteral == itemLiteral)
        #expect(tagOnly.itemLiteral == nil)
        // Packed beside plain elements and read back; the file spells the tag as the literal does.
        let state = SceneState(
            id: try sceneID("s"), version: 1, created: 1, modified: 1, format: .codable,
            path: [both, try typed("A.b", "1"), tagOnly])
        #expect(state.path == [both, try typed("A.b", "1"), tagOnly])
        #expect(state.path.map(\.tagLiteral) == [tagLiteral, nil, tagLiteral])
        #expect(state.path.map(\.itemLiteral) == [itemLiteral, nil, nil])
        let file = SceneFileCodec.encode(state.path, as: .codable)
        // Decoding keeps a literal only where escaping differs: not for `My.T` alone.
        let kept: [UInt8]? = size == 0 ? nil : tagLiteral
        let codec = SceneFileCodec(maxFileBytes: file.count)
        #expect(try codec.decode(file).path.map(\.tagLiteral) == [kept, nil, kept])
    }

    @Test("an empty tag is a tag")
    func emptyTag() throws {
        let empty = try typed("", "1")
        #expect(empty.tag == "")
        #expect(empty != (try untyped("1")))
        #expect(SceneFormat.of([empty]) == .codable)
        #expect(text(SceneFileCodec.encode([empty], as: .codable)) == #"["","1"]"#)
    }

    @Test("a decoded path shares one buffer, and a state keeps it as is")
    func sharing() throws {
        let decoded = try SceneFileCodec().decode(utf8(Fixtures.emojiCodable))
        let state = SceneState(
            id: try sceneID("s"), version: 1, created: 1, modified: 1, format: .codable, path: decoded.path)
        #expect(state.elements === ElementStorage.pack(decoded.path))
        #expect(decoded.path.allSatisfy { $0.storage === state.elements })
        // A prefix, a reordering or a mix is packed anew, with the same content.
        for path in [
            Array(decoded.path.dropLast()), decoded.path.reversed(), decoded.path + [try typed("A.b", "1")],
        ] {
            let packed = ElementStorage.pack(path)
            #expect(!(packed === state.elements))
            #expect(packed.elements == path)
            #expect(packed.elements.map(\.item) == path.map(\.item))
        }
        #expect(ElementStorage.pack([]) === ElementStorage.empty)
        #expect(ElementStorage.empty.elements.isEmpty)
    }

    @Test("a state's path can be changed in place")
    func mutatePath() throws {
        var state = SceneState(
            id: try sceneID("s"), version: 1, created: 1, modified: 1, format: .array, path: [try untyped("1")])
        state.path.append(try untyped("2"))
        state.path[0] = try untyped("0")
        #expect(state.path.map(\.item) == [utf8("0"), utf8("2")])
        #expect(state.depth == 2)
        #expect(state.fileBytes == utf8("[0,2]"))
        state.path.removeAll()
        #expect(state.depth == 0)
        #expect(state.fileBytes == utf8("[]"))
    }

    @Test("states compare by content, not by buffer")
    func stateEquality() throws {
        let a = SceneState(
            id: try sceneID("s"), version: 1, created: 1, modified: 1, format: .array, path: [try untyped("1.0")])
        var b = SceneState(
            id: try sceneID("s"), version: 1, created: 1, modified: 1, format: .array, path: [try untyped("1")])
        #expect(a == b)
        b.version = 2
        #expect(a != b)
        b.version = 1
        b.layout = utf8("[1 ]")
        #expect(a != b)
        b.layout = nil
        b.path = [try untyped("2")]
        #expect(a != b)
    }
}
