import Testing

@testable import SceneSyncCore

@Suite("Wire: a request's path decoded straight from its bytes")
struct WireSpanDecodingTests {
    /// Decodes `path` both ways: through a tree, and from the bytes.
    func both(_ path: String) -> (tree: Result<[Element], SceneSyncError>, spans: Result<[Element], SceneSyncError>) {
        let line = Array(#"{"path":"#.utf8) + Array(path.utf8) + Array("}".utf8)
        let tree: Result<[Element], SceneSyncError>
        do throws(SceneSyncError) {
            let json = try? JSONParser.parse(line)
            tree = .success(try Wire.decodePath(json?["path"] ?? .null))
        } catch {
            tree = .failure(error)
        }
        let spans: Result<[Element], SceneSyncError>
        do throws(SceneSyncError) {
            let members = try? JSONParser.objectMemberSpans(of: line)
            spans = .success(try Wire.decodePath(line, span: members?["path"] ?? 0..<0))
        } catch {
            spans = .failure(error)
        }
        return (tree, spans)
    }

    @Test(
        "the stored bytes are those of the tree, serialized",
        arguments: [
            #"[{"value":1}]"#,
            #"[ { "type" : "A.B" , "value" : { "id" : 7 , "name" : "Desserts" } } ]"#,
            #"[{"value":[1, 2.50, -0, 1e3, true, false, null, "x y"]}]"#,
            #"[{"value":{"a":1,"a":2}}]"#,
            #"[{"value":{"a":{"b":1},"c":{"b":2}}}]"#,
            #"[{"value":"caf\u00e9"}]"#,
            #"[{"value":"café"}]"#,
            #"[{"value":"a\/b\n"}]"#,
            #"[{"value":{"k":[{"k":1},{"k":2}],"k2":"k"}}]"#,
            #"[{"type":"T","value":{}},{"value":[]}]"#,
            #"[{"t\u0079pe":"T","value":1}]"#,
            #"[{"type":"T\u0041","v\u0061lue":1}]"#,
            #"[{"type":"A","value":1,"type":"B"}]"#,
            #"[{"type":"é","value":1,"other":{"type":"x"}}]"#,
            #"[]"#,
        ])
    func sameBytes(_ path: String) throws {
        let (tree, spans) = both(path)
        let expected = try tree.get()
        let decoded = try spans.get()
        #expect(decoded.map(\.item) == expected.map(\.item))
        #expect(decoded.map(\.tag) == expected.map(\.tag))
    }

    @Test(
        "refusals are those of the tree",
        arguments: [
            #"{"value":1}"#, #"[1]"#, #"[{"type":"T"}]"#, #"[{"type":"","value":1}]"#, #"[{"type":3,"value":1}]"#,
            #"[{"value":1},{"type":null,"value":2}]"#, #"[{"t\u0079pe":"","value":1}]"#,
            #"[{"type":"T","v\u0061lu":1}]"#, #"[{"type":["T"],"value":1}]"#,
        ])
    func sameErrors(_ path: String) {
        let (tree, spans) = both(path)
        guard case .failure(let expected) = tree, case .failure(let error) = spans else {
            Issue.record("expected both to refuse \(path): \(tree) / \(spans)")
            return
        }
        #expect(error.message == expected.message)
        #expect(error.code == expected.code)
    }

    @Test("a repeated key, an escape or other UTF-8 leaves the fast path; plain ASCII stays on it")
    func fastPathBounds() {
        func compact(_ text: String) -> [UInt8]? {
            let bytes = Array(text.utf8)
            return Wire.compactItem(bytes, 0..<bytes.count)
        }
        #expect(compact(#"{ "a" : [1, "b c"] }"#) == Array(#"{"a":[1,"b c"]}"#.utf8))
        #expect(compact(#"{"a":1,"a":2}"#) == nil)
        #expect(compact(#"{"a":{"a":1}}"#) != nil)
        #expect(compact(#""\n""#) == nil)
        #expect(compact(#""é""#) == nil)
    }

    @Test(
        "each object's keys are its own: siblings and nested objects may share keys, a repeat in one may not",
        arguments: [
            (#"[{"a":1},{"a":2}]"#, true), (#"{"a":{"b":1},"b":2}"#, true), (#"{"a":{"b":1},"a":2}"#, false),
            (#"{"a":[{"a":1},{"a":1}],"b":{"a":1}}"#, true), (#"[[{"x":1,"y":2,"x":3}]]"#, false),
            (#"{"a":1,"b":{"c":[{"d":1}]},"c":2,"b":3}"#, false),
        ])
    func keysPerObject(_ text: String, _ stays: Bool) throws {
        let bytes = Array(text.utf8)
        let compact = Wire.compactItem(bytes, 0..<bytes.count)
        #expect((compact != nil) == stays)
        if let compact { #expect(compact == (try JSONParser.parse(bytes).serialized())) }
    }

    @Test("an item deeper or with more keys open than the fast path holds is left to the parser")
    func fastPathLimits() {
        let deep = Array(
            (String(repeating: "[", count: Wire.compactDepth + 1) + String(repeating: "]", count: Wire.compactDepth + 1))
                .utf8)
        #expect(Wire.compactItem(deep, 0..<deep.count) == nil)
        let deepest = Array(
            (String(repeating: "[", count: Wire.compactDepth) + String(repeating: "]", count: Wire.compactDepth)).utf8)
        #expect(Wire.compactItem(deepest, 0..<deepest.count) == deepest)
        let members = (0...Wire.compactKeys).map { #""k\#($0)":\#($0)"# }
        let wide = Array(("{" + members.joined(separator: ",") + "}").utf8)
        #expect(Wire.compactItem(wide, 0..<wide.count) == nil)
        let widest = Array(("{" + members.dropLast().joined(separator: ",") + "}").utf8)
        #expect(Wire.compactItem(widest, 0..<widest.count) == widest)
    }
}
