import Testing

@testable import SceneSyncCore

@Suite("SceneFileCodec")
struct SceneFileCodecTests {
    static let auto = SceneFileCodec()
    static let pinnedCodable = SceneFileCodec(policy: .codable)
    static let pinnedArray = SceneFileCodec(policy: .array)

    // MARK: - Fixtures from the wild

    @Test("real files decode to the documented paths", arguments: Fixtures.all)
    func fixtures(_ fixture: FixtureFile) throws {
        let decoded = try Self.auto.decode(fixture.bytes)
        #expect(decoded.format == fixture.format)
        #expect(decoded.path == (try fixture.expectedPath()))
        #expect(decoded.path.map(\.tag) == fixture.expected.map(\.0))
        // Pinning the detected format changes nothing.
        if let format = fixture.format {
            let pinned = SceneFileCodec(policy: format == .codable ? .codable : .array)
            #expect(try pinned.decode(fixture.bytes) == decoded)
        }
    }

    @Test("the documented example is [applePie, 42], root first")
    func documentedExample() throws {
        let decoded = try Self.auto.decode(utf8(Fixtures.recipeCodable))
        #expect(decoded.format == .codable)
        #expect(decoded.path.count == 2)
        #expect(decoded.path[0].tag == "MyApp.Recipe")
        #expect(text(decoded.path[0].item) == #"{"applePie":{}}"#)
        #expect(decoded.path[1].tag == "Swift.Int")
        #expect(text(decoded.path[1].item) == "42")
        #expect(decoded.layout == nil)
    }

    @Test(
        "compact files round-trip byte for byte through encode",
        arguments: Fixtures.all.filter { !$0.name.contains("pretty") })
    func compactRoundTrip(_ fixture: FixtureFile) throws {
        let decoded = try Self.auto.decode(fixture.bytes)
        #expect(decoded.layout == nil)
        #expect(SceneFileCodec.encode(decoded.path, as: decoded.format ?? .array) == fixture.bytes)
        #expect(SceneFileCodec.encodedSize(decoded.path, as: decoded.format ?? .array) == fixture.bytes.count)
        let state = try SceneState(
            id: sceneID("s"), version: 1, created: 1, modified: 1, format: decoded.format ?? .array, path: decoded.path,
            layout: decoded.layout)
        #expect(state.fileBytes == fixture.bytes)
    }

    @Test(
        "pretty-printed files keep their bytes through layout",
        arguments: Fixtures.all.filter { $0.name.contains("pretty") })
    func prettyRoundTrip(_ fixture: FixtureFile) throws {
        let decoded = try Self.auto.decode(fixture.bytes)
        let layout = try #require(decoded.layout)
        #expect(layout == fixture.bytes)
        let format = try #require(decoded.format)
        let compact = SceneFileCodec.encode(decoded.path, as: format)
        #expect(compact != fixture.bytes)
        #expect(try Self.auto.decode(compact).path == decoded.path)
        let state = try SceneState(
            id: sceneID("s"), version: 1, created: 1, modified: 1, format: format, path: decoded.path, layout: layout)
        #expect(state.fileBytes == fixture.bytes)
    }

    @Test(
        "files that differ from the canonical encoding keep a layout",
        arguments: ["[1, 2]", " [1,2]", "[1,2]\n", "[ ]", "[\n]", #"[ "A.b" , "1" ]"#])
    func nonCanonicalLayout(_ file: String) throws {
        let decoded = try Self.auto.decode(utf8(file))
        #expect(decoded.layout == utf8(file))
        #expect(
            try Self.auto.decode(SceneFileCodec.encode(decoded.path, as: decoded.format ?? .array)).path == decoded.path
        )
    }

    @Test("escapes that re-escaping would change are kept as the item literal")
    func itemLiterals() throws {
        let both = try Self.auto.decode(utf8(Fixtures.slashCodableBoth))
        #expect(text(both.path[0].item) == #"{"url":"https:\/\/x"}"#)
        #expect(both.path[0].itemLiteral == utf8(#"{\"url\":\"https:\\\/\\\/x\"}"#))
        let inner = try Self.auto.decode(utf8(Fixtures.slashCodableInner))
        #expect(text(inner.path[0].item) == #"{"url":"https:\/\/x"}"#)
        #expect(inner.path[0].itemLiteral == nil)
        let unicode = try Self.auto.decode(utf8(Fixtures.unicodeEscapeCodable))
        #expect(text(unicode.path[0].item) == #""Zürich""#)
        #expect(unicode.path[0].itemLiteral == utf8(#"\"Z\u00fcrich\""#))
        #expect(text(unicode.path[1].item) == #"{"name":"Caf\u00e9"}"#)
        #expect(unicode.path[1].itemLiteral == nil)
    }

    @Test("array values keep their exact bytes, spacing included")
    func arrayValueBytes() throws {
        let decoded = try Self.auto.decode(utf8(#"[ {"a" : 1,  "b":[ 2 ]} , "x\/y" ,1.50 ]"#))
        #expect(decoded.format == .array)
        #expect(decoded.path.map { text($0.item) } == [#"{"a" : 1,  "b":[ 2 ]}"#, #""x\/y""#, "1.50"])
    }

    // MARK: - Pushing onto file-derived paths keeps unchanged elements' bytes

    @Test("unchanged codable items keep their exact bytes when the path grows")
    func codablePushKeepsBytes() throws {
        let decoded = try Self.auto.decode(utf8(Fixtures.slashCodableBoth))
        let path = decoded.path + [try typed("MyApp.Recipe", #"{"x":1}"#)]
        #expect(
            text(SceneFileCodec.encode(path, as: .codable))
                == #"["MyApp.Recipe","{\"x\":1}","MyApp.Link","{\"url\":\"https:\\\/\\\/x\"}"]"#)
        let unicode = try Self.auto.decode(utf8(Fixtures.unicodeEscapeCodable))
        #expect(
            text(SceneFileCodec.encode(unicode.path + [try typed("Swift.Int", "1")], as: .codable))
                == #"["Swift.Int","1","MyApp.Place","{\"name\":\"Caf\\u00e9\"}","MyApp.City","\"Z\u00fcrich\""]"#)
        let pretty = try Self.auto.decode(utf8(Fixtures.emojiCodablePretty))
        #expect(
            text(SceneFileCodec.encode(pretty.path + [try typed("MyApp.New", "1")], as: .codable))
                == #"["MyApp.New","1","NavigationBackportApp.EmojiVisualisation","{\"count\":99,\"emoji\":\"🎈\"}","Swift.Int","99"]"#
        )
    }

    /// Found by the scene file fuzzer (Fuzz/SceneFileCodec): a tag's escapes were dropped whenever the file was
    /// written for a change to another element, so `"My\/App.X"` came back as `"My/App.X"`. §3: tags are opaque,
    /// never rewritten, and unchanged elements are written back byte for byte.
    @Test(
        "unchanged codable tags keep their exact spelling when the path grows or shrinks",
        arguments: [
            #"["My\/App.X","1","A.b","2"]"#, #"["A.\u0062","1"]"#, #"["My\u0041pp.X","1"]"#, #"["A.\uD800","1"]"#,
            #"["Caf\u00e9.X","\"\u00e9\""]"#,
        ])
    func codableTagSpellingIsKept(_ file: String) throws {
        let decoded = try Self.auto.decode(utf8(file))
        #expect(decoded.format == .codable)
        // Written as read: no layout needed, the elements themselves reproduce the file.
        #expect(decoded.layout == nil)
        #expect(SceneFileCodec.encode(decoded.path, as: .codable) == utf8(file))
        let pushed = SceneFileCodec.encode(decoded.path + [try typed("Swift.Int", "7")], as: .codable)
        #expect(text(pushed) == #"["Swift.Int","7","# + file.dropFirst())
        // Without its root, the file is its own first pair: the top of the stack comes first.
        let rootless = SceneFileCodec.encode(Array(decoded.path.dropFirst()), as: .codable)
        #expect(rootless == utf8(file).prefix(rootless.count - 1) + utf8("]"))
        #expect(try Self.auto.decode(pushed).path == decoded.path + [try typed("Swift.Int", "7")])
    }

    @Test("a tag spelled with escapes equals the same tag spelled plainly")
    func escapedTagEquality() throws {
        let escaped = try Self.auto.decode(utf8(#"["My\/App.X","1"]"#)).path
        let plain = try Self.auto.decode(utf8(#"["My/App.X","1"]"#)).path
        #expect(escaped == plain)
        #expect(escaped[0].tag == "My/App.X")
        #expect(escaped[0].tagLiteral == utf8(#"My\/App.X"#))
        #expect(plain[0].tagLiteral == nil)
        // The wire shows the tag, not the file's spelling of it.
        var wire: [UInt8] = []
        escaped[0].appendWire(to: &wire)
        #expect(text(wire) == #"{"type":"My/App.X","value":1}"#)
    }

    @Test("unchanged array values keep their spacing when the path grows")
    func arrayPushKeepsBytes() throws {
        let decoded = try Self.auto.decode(utf8(Fixtures.recipeArrayPretty))
        let first = "{\n    \"applePie\" : {\n\n    }\n  }"
        let second = "{\n    \"chocolateCake\" : {\n\n    }\n  }"
        #expect(decoded.path.map { text($0.item) } == [first, second])
        let grown = SceneFileCodec.encode(decoded.path + [try untyped("3")], as: .array)
        #expect(text(grown) == "[" + first + "," + second + ",3]")
        #expect(try Self.auto.decode(grown).path == decoded.path + [try untyped("3")])
    }

    // MARK: - Detection under auto

    @Test(
        "auto detects codable files",
        arguments: [
            #"["A.b","1"]"#, #"["_T.x","null"]"#, #"["_.","[]"]"#, #"["A.b"," 1 "]"#,
            #"["Swift.Int","42","a.b","\"x\""]"#,
            #"["Swift.Array<Swift.Int>","[]"]"#, #"["Swift.Optional<MyApp.X>","null"]"#,
            #"["A.b","\"A.b\"","A.b","\"1\""]"#,
        ])
    func detectsCodable(_ file: String) throws {
        let decoded = try Self.auto.decode(utf8(file))
        #expect(decoded.format == .codable)
        #expect(decoded.path.allSatisfy { $0.tag != nil })
    }

    @Test(
        "auto reads every other array as an array path",
        arguments: [
            #"["A.b"]"#, #"["A.b","1","C.d"]"#, #"["Ab","1"]"#, #"["1A.b","1"]"#, #"[".A","1"]"#, #"["-A.b","1"]"#,
            #"["A.b","x"]"#, #"["A.b",""]"#, #"["A.b",1]"#, #"[1,"A.b"]"#, #"["A.b","1",2,"3"]"#, "[1,2,3]",
            #"[{"applePie":{}}]"#, #"["","1"]"#, "[null,null]", #"["A.b","1","C.d","{"]"#, #"["a","b"]"#,
            #"["x.y","z.w"]"#, #"[["A.b"],["1"]]"#, #"["A.b","1 2"]"#, #"["A.b","[1,]"]"#,
        ])
    func detectsArray(_ file: String) throws {
        let decoded = try Self.auto.decode(utf8(file))
        #expect(decoded.format == .array)
        #expect(decoded.path.allSatisfy { $0.tag == nil })
        #expect(SceneFileCodec.encode(decoded.path, as: .array) == utf8(file))
    }

    @Test("empty arrays are empty paths of no format", arguments: ["[]", " [ ] ", "[\n]", "\t[]\n"])
    func empty(_ file: String) throws {
        for codec in [Self.auto, Self.pinnedCodable, Self.pinnedArray] {
            let decoded = try codec.decode(utf8(file))
            #expect(decoded.path.isEmpty)
            #expect(decoded.format == nil)
        }
    }

    @Test("an item nested more than 256 levels makes the file an array path under auto")
    func deepItemUnderAuto() throws {
        let deep = String(repeating: "[", count: 257) + String(repeating: "]", count: 257)
        let decoded = try Self.auto.decode(utf8(#"["A.b",""# + deep + #""]"#))
        #expect(decoded.format == .array)
        #expect(decoded.path.count == 2)
        let ok = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        let accepted = try Self.auto.decode(utf8(#"["A.b",""# + ok + #""]"#))
        #expect(accepted.format == .codable)
        #expect(accepted.path.count == 1)
    }

    // MARK: - Pinned policies

    @Test("pinned codable rejects misfits, each with its own error")
    func pinnedCodableRejections() throws {
        let codec = Self.pinnedCodable
        #expect(throws: SceneFileError.oddLength(count: 1)) { try codec.decode(utf8(#"["A.b"]"#)) }
        #expect(throws: SceneFileError.oddLength(count: 3)) { try codec.decode(utf8(#"["A.b","1","C.d"]"#)) }
        #expect(throws: SceneFileError.notAString(index: 1)) { try codec.decode(utf8(#"["A.b",1]"#)) }
        #expect(throws: SceneFileError.notAString(index: 0)) { try codec.decode(utf8(#"[1,"x"]"#)) }
        #expect(throws: SceneFileError.notAString(index: 2)) { try codec.decode(utf8(#"["A.b","1",{},"2"]"#)) }
        #expect(throws: SceneFileError.invalidItem(index: 3, .truncated)) {
            try codec.decode(utf8(#"["A.b","1","C.d","{"]"#))
        }
        #expect(throws: SceneFileError.invalidItem(index: 1, .truncated)) { try codec.decode(utf8(#"["A.b",""]"#)) }
        let unparsable = #expect(throws: SceneFileError.self) { try codec.decode(utf8(#"["A.b","x"]"#)) }
        guard case .invalidItem(index: 1, .unexpected) = unparsable else {
            Issue.record("expected invalidItem(1, unexpected), got \(String(describing: unparsable))")
            return
        }
        let deep = String(repeating: "[", count: 257) + String(repeating: "]", count: 257)
        #expect(throws: SceneFileError.invalidItem(index: 1, .tooDeep(limit: 256))) {
            try codec.decode(utf8(#"["A.b",""# + deep + #""]"#))
        }
        for error in [SceneFileError.oddLength(count: 1), .notAString(index: 0), .invalidItem(index: 1, .truncated)] {
            #expect(error.warningCode == .invalidFile)
        }
    }

    @Test("pinned codable accepts any tag and any parsable item")
    func pinnedCodableAccepts() throws {
        let decoded = try Self.pinnedCodable.decode(utf8(#"["ab","1","","\"x\"","1A","{}"]"#))
        #expect(decoded.format == .codable)
        #expect(decoded.path.map(\.tag) == ["1A", "", "ab"])
        let fixture = try Self.pinnedCodable.decode(utf8(Fixtures.recipeCodable))
        #expect(fixture.path == (try Self.auto.decode(utf8(Fixtures.recipeCodable)).path))
    }

    @Test(
        "pinned array accepts any array",
        arguments: [
            Fixtures.recipeCodable, #"["A.b"]"#, "[1,2,3]", #"[{"a":[]},"x",null,true,-1.5]"#,
            Fixtures.recipeArrayPretty,
        ])
    func pinnedArrayAccepts(_ file: String) throws {
        let decoded = try Self.pinnedArray.decode(utf8(file))
        #expect(decoded.format == .array)
        #expect(decoded.path.allSatisfy { $0.tag == nil })
        #expect(writtenBytes(decoded) == utf8(file))
    }

    // MARK: - Rejections

    struct Rejection: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let check: @Sendable (SceneFileError) -> Bool
        let code: WarningCode
        var testDescription: String { name }
    }

    static let rejections: [Rejection] = [
        Rejection(name: "not JSON", bytes: utf8("hello"), check: isInvalidJSON, code: .invalidFile),
        Rejection(name: "empty file", bytes: [], check: { $0 == .invalidJSON(.truncated) }, code: .invalidFile),
        Rejection(
            name: "whitespace only", bytes: utf8(" \n"), check: { $0 == .invalidJSON(.truncated) }, code: .invalidFile),
        Rejection(
            name: "truncated", bytes: utf8("[1,2"), check: { $0 == .invalidJSON(.truncated) }, code: .invalidFile),
        Rejection(
            name: "truncated codable", bytes: utf8(#"["Swift.Int","4"#), check: { $0 == .invalidJSON(.truncated) },
            code: .invalidFile),
        Rejection(
            name: "trailing garbage", bytes: utf8("[1,2]x"),
            check: { $0 == .invalidJSON(.unexpected(offset: 5, "trailing characters after the JSON value")) },
            code: .invalidFile),
        Rejection(name: "two arrays", bytes: utf8("[1] [2]"), check: isInvalidJSON, code: .invalidFile),
        Rejection(name: "object", bytes: utf8(#"{"a":1}"#), check: { $0 == .notAnArray }, code: .invalidFile),
        Rejection(name: "string", bytes: utf8(#""[1]""#), check: { $0 == .notAnArray }, code: .invalidFile),
        Rejection(name: "number", bytes: utf8(" 42 "), check: { $0 == .notAnArray }, code: .invalidFile),
        Rejection(name: "null", bytes: utf8("null"), check: { $0 == .notAnArray }, code: .invalidFile),
        Rejection(
            name: "broken object", bytes: utf8(#"{"a":"#), check: { $0 == .invalidJSON(.truncated) }, code: .invalidFile
        ),
        Rejection(
            name: "257 levels", bytes: utf8(nestedArrays(257)), check: { $0 == .invalidJSON(.tooDeep(limit: 256)) },
            code: .invalidFile),
        Rejection(
            name: "257 levels in an element", bytes: utf8("[1," + nestedArrays(256) + "]"),
            check: { $0 == .invalidJSON(.tooDeep(limit: 256)) }, code: .invalidFile),
        Rejection(
            name: "257 levels of objects", bytes: utf8("[" + nestedObjects(256) + "]"),
            check: { $0 == .invalidJSON(.tooDeep(limit: 256)) }, code: .invalidFile),
        Rejection(
            name: "invalid UTF-8 in a string", bytes: [0x5B, 0x22, 0xFF, 0x22, 0x5D], check: isInvalidJSON,
            code: .invalidFile),
        Rejection(
            name: "invalid UTF-8 in a codable item", bytes: utf8(#"["A.b",""#) + [0xC3, 0x28] + utf8(#""]"#),
            check: isInvalidJSON, code: .invalidFile),
        Rejection(
            name: "invalid UTF-8 outside strings", bytes: [0x5B, 0x31, 0x5D, 0xFF], check: isInvalidJSON,
            code: .invalidFile),
        Rejection(
            name: "control character in a string", bytes: utf8("[\"a\u{01}b\"]"), check: isInvalidJSON,
            code: .invalidFile),
        Rejection(name: "raw newline in a string", bytes: utf8("[\"a\nb\"]"), check: isInvalidJSON, code: .invalidFile),
        Rejection(
            name: "raw tab in a codable item", bytes: utf8("[\"A.b\",\"\t1\"]"), check: isInvalidJSON,
            code: .invalidFile),
        Rejection(
            name: "larger than maxFileBytes", bytes: utf8("[" + String(repeating: "1,", count: 3000) + "1]"),
            check: { $0 == .tooLarge(bytes: 6003, limit: 5000) }, code: .fileTooLarge),
        Rejection(
            name: "more than maxDepth elements", bytes: utf8("[" + String(repeating: "1,", count: 21) + "1]"),
            check: { if case .tooManyElements(_, limit: 10) = $0 { true } else { false } }, code: .fileTooLarge),
        Rejection(
            name: "too many elements and broken", bytes: utf8("[" + String(repeating: "1,", count: 30) + "x]"),
            check: isInvalidJSON, code: .invalidFile),
    ]

    static func isInvalidJSON(_ error: SceneFileError) -> Bool {
        if case .invalidJSON = error { return true }
        return false
    }

    @Test("rejected files, with their warning codes", arguments: rejections)
    func rejected(_ rejection: Rejection) {
        for policy in FormatPolicy.allCases {
            let codec = SceneFileCodec(policy: policy, maxFileBytes: 5000, maxDepth: 10)
            let error = #expect(throws: SceneFileError.self) { try codec.decode(rejection.bytes) }
            guard let error else { continue }
            #expect(rejection.check(error), "\(policy): \(error)")
            #expect(error.warningCode == rejection.code)
        }
    }

    @Test("every kind of rejection has its own description")
    func descriptions() {
        let errors: [SceneFileError] = [
            .tooLarge(bytes: 2, limit: 1), .tooManyElements(count: 2, limit: 1), .invalidJSON(.truncated), .notAnArray,
            .oddLength(count: 1), .notAString(index: 0), .invalidItem(index: 1, .truncated),
        ]
        #expect(Set(errors.map(\.description)).count == errors.count)
        #expect(errors.map(\.warningCode) == [.fileTooLarge, .fileTooLarge] + Array(repeating: .invalidFile, count: 5))
        #expect(SceneFileError.tooLarge(bytes: 2000, limit: 1000).description.contains("2000"))
        #expect(SceneFileError.notAnArray.description == "not a JSON array")
    }

    // MARK: - Limits

    @Test("256 levels are accepted, the outermost array being level 1")
    func nestingLimit() throws {
        let decoded = try Self.auto.decode(utf8(nestedArrays(256)))
        #expect(decoded.path.count == 1)
        #expect(decoded.format == .array)
        let objects = try Self.auto.decode(utf8("[" + nestedObjects(255) + "]"))
        #expect(objects.path.count == 1)
    }

    @Test("a file of exactly maxFileBytes is accepted, one more byte is not")
    func sizeLimit() throws {
        let codec = SceneFileCodec(maxFileBytes: 7)
        #expect(try codec.decode(utf8("[1,2,3]")).path.count == 3)
        #expect(throws: SceneFileError.tooLarge(bytes: 8, limit: 7)) { try codec.decode(utf8("[1,2,3] ")) }
        #expect(throws: SceneFileError.tooLarge(bytes: 9, limit: 7)) { try codec.decode(utf8("[1,2,3,4]")) }
    }

    @Test("an array path of maxDepth elements is accepted, one more is not")
    func arrayDepthLimit() throws {
        let codec = SceneFileCodec(maxDepth: 3)
        #expect(try codec.decode(utf8("[1,2,3]")).path.count == 3)
        let error = #expect(throws: SceneFileError.self) { try codec.decode(utf8("[1,2,3,4]")) }
        #expect(error?.warningCode == .fileTooLarge)
        guard case .tooManyElements(let count, let limit) = error else {
            Issue.record("expected tooManyElements, got \(String(describing: error))")
            return
        }
        #expect(count > 3)
        #expect(limit == 3)
    }

    /// `scenes.max_depth` counts path elements; a codable file holds two entries per element.
    @Test("a codable path of maxDepth elements is accepted, one more is not", arguments: FormatPolicy.allCases)
    func codableDepthLimit(_ policy: FormatPolicy) throws {
        guard policy != .array else { return }
        let codec = SceneFileCodec(policy: policy, maxDepth: 3)
        let three = #"["A.b","1","A.b","2","A.b","3"]"#
        let decoded = try codec.decode(utf8(three))
        #expect(decoded.format == .codable)
        #expect(decoded.path.count == 3)
        let four = #"["A.b","1","A.b","2","A.b","3","A.b","4"]"#
        let error = #expect(throws: SceneFileError.self) { try codec.decode(utf8(four)) }
        #expect(error?.warningCode == .fileTooLarge)
        if policy == .auto {
            // Six array values are too many even though six strings would be three codable elements.
            #expect(throws: SceneFileError.self) { try codec.decode(utf8(#"["A.b","1","A.b","2","x","3"]"#)) }
        }
        #expect(throws: SceneFileError.self) { try codec.decode(utf8("[1,2,3,4,5,6,7]")) }
    }

    @Test("limits of Int.max are safe (snapshots decode without limits)")
    func unlimited() throws {
        let codec = SceneFileCodec(policy: .auto, maxFileBytes: .max, maxDepth: .max)
        #expect(try codec.decode(utf8(Fixtures.recipeCodable)).path.count == 2)
        #expect(try codec.decode(utf8(Fixtures.intArray)).path.count == 3)
    }
}

/// What a freshly decoded file would be written back as.
func writtenBytes(_ decoded: SceneFileCodec.Decoded) -> [UInt8] {
    decoded.layout ?? SceneFileCodec.encode(decoded.path, as: decoded.format ?? .array)
}
