import Testing

@testable import SceneSyncCore

/// A scene's file bytes written straight from its element records, as snapshots and write-backs take them.
@Suite("File bytes from records")
struct FileBytesTests {
    /// Every fixture's path as a state that keeps no layout, so its bytes are always written from its records.
    static func states() throws -> [(name: String, state: SceneState, path: [Element])] {
        try Fixtures.all.map { fixture in
            let decoded = try SceneFileCodec().decode(fixture.bytes)
            let state = SceneState(
                id: try sceneID("s"), version: 1, created: 1, modified: 1, format: decoded.format ?? .array,
                path: decoded.path)
            return (fixture.name, state, decoded.path)
        }
    }

    @Test("a state's file bytes are what encode writes for its path, and their count is counted exactly")
    func recordsMatchEncode() throws {
        for (name, state, path) in try Self.states() {
            let encoded = SceneFileCodec.encode(path, as: state.format)
            #expect(state.fileBytes == encoded, "\(name)")
            #expect(state.fileByteCount == encoded.count, "\(name)")
            var out = utf8("prefix:")
            state.appendFileBytes(to: &out)
            #expect(out == utf8("prefix:") + encoded, "\(name)")
        }
    }

    @Test("a codable state writes its top element first, an array state its root first")
    func order() throws {
        let codable = SceneState(
            id: try sceneID("c"), version: 1, created: 1, modified: 1, format: .codable,
            path: [try typed("A.root", "1"), try typed("A.top", #"{"k":"v"}"#)])
        #expect(text(codable.fileBytes) == #"["A.top","{\"k\":\"v\"}","A.root","1"]"#)
        #expect(codable.fileByteCount == codable.fileBytes.count)
        let array = SceneState(
            id: try sceneID("a"), version: 1, created: 1, modified: 1, format: .array,
            path: [try untyped("1"), try untyped(#"{"k":2}"#)])
        #expect(text(array.fileBytes) == #"[1,{"k":2}]"#)
        #expect(array.fileByteCount == 11)
        let empty = SceneState(id: try sceneID("e"), version: 1, created: 1, modified: 1, format: .codable, path: [])
        #expect(text(empty.fileBytes) == "[]")
        #expect(empty.fileByteCount == 2)
    }

    @Test("a kept layout is the file's bytes and count")
    func layout() throws {
        let bytes = utf8("[ 1 ]\n")
        let decoded = try SceneFileCodec().decode(bytes)
        let state = SceneState(
            id: try sceneID("p"), version: 1, created: 1, modified: 1, format: .array, path: decoded.path,
            layout: decoded.layout)
        #expect(state.fileBytes == bytes)
        #expect(state.fileByteCount == bytes.count)
        var out: [UInt8] = []
        state.appendFileBytes(to: &out)
        #expect(out == bytes)
    }

    @Test(
        "unescaping tells whether escaping again gives the literal back",
        arguments: [
            (#"plain é"#, true), (#"\"q\" \\ \n\r\t\b\f"#, true), (#"\u0000\u001f\u0001"#, true),
            (#"\/"#, false), (#"\u0041"#, false), (#"\u001F"#, false), (#"\u000a"#, false), (#"\u00e9"#, false),
            (#"\ud83c\udf88"#, false), (#"\ud83c"#, false), ("tab\tinside", false),
        ])
    func unescapeCanonical(_ literal: String, _ canonical: Bool) {
        let body = utf8(literal)[...]
        var unescaped: [UInt8] = []
        #expect(JSONParser.unescape(body, appendingTo: &unescaped) == canonical)
        #expect(unescaped == JSONParser.unescapeBytes(body))
        // The flag says exactly what escaping the result again and comparing would.
        var escaped: [UInt8] = []
        JSONWriter.appendEscaped(unescaped, to: &escaped)
        #expect((escaped == Array(body)) == canonical)
    }

    @Test("escapedCount counts what appendEscaped writes")
    func escapedCount() {
        for sample in ["", "plain", "q\"b\\", "\n\r\t\u{8}\u{c}", "\u{0}\u{1f}\u{7f}", "é🎈"] {
            var escaped: [UInt8] = []
            JSONWriter.appendEscaped(utf8(sample), to: &escaped)
            let count = utf8(sample).withUnsafeBufferPointer { JSONWriter.escapedCount($0) }
            #expect(count == escaped.count, "\(sample)")
        }
    }
}
