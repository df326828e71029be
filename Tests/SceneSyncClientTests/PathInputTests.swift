import SceneSyncClient
import SceneSyncCore
import Testing

/// What `scenesync set` and `push` accept, and what they refuse with exit status 2.
@Suite struct PathInputTests {
    private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func codableSceneFile() throws {
        let file = try PathInput.sceneFile(bytes(#"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#))
        #expect(file.format == .codable)
        #expect(file.path.map(\.tag) == ["MyApp.Recipe", "Swift.Int"])
        #expect(
            file.path.map(\.value) == [
                try JSONParser.parse(bytes(#"{"applePie":{}}"#)), .number(JSONNumber(UInt64(42))),
            ])
    }

    @Test func arraySceneFile() throws {
        let file = try PathInput.sceneFile(bytes(#"[{"applePie":{}}, 2, "x"]"#))
        #expect(file.format == .array)
        #expect(file.path.count == 3 && file.path.allSatisfy { $0.tag == nil })
        // An odd-length array of strings is an array path under the daemon's auto rule, not an error.
        #expect(try PathInput.sceneFile(bytes(#"["a","b","c"]"#)).format == .array)
    }

    @Test func emptySceneFile() throws {
        let file = try PathInput.sceneFile(bytes(" [ ] "))
        #expect(file.path.isEmpty && file.format == nil)
    }

    @Test func refusals() throws {
        #expect(throws: PathInput.Failure.notAnArray) { try PathInput.sceneFile(bytes(#"{"a":1}"#)) }
        #expect(throws: PathInput.Failure.notAnArray) { try PathInput.sceneFile(bytes("42")) }
        #expect(throws: PathInput.Failure.self) { try PathInput.sceneFile(bytes("[1,")) }
        #expect(throws: PathInput.Failure.self) { try PathInput.sceneFile(bytes("")) }
        #expect(throws: PathInput.Failure.notAnArray) { try PathInput.wirePath(bytes(#"{"value":1}"#)) }
        #expect(throws: PathInput.Failure.self) { try PathInput.wirePath(bytes(#"[{"type":"T"}]"#)) }
        #expect(throws: PathInput.Failure.self) { try PathInput.wirePath(bytes("nope")) }
    }

    @Test func wirePath() throws {
        let path = try PathInput.wirePath(bytes(#"[{"type":"Swift.Int","value":1},{"type":"Swift.Int","value":2}]"#))
        #expect(
            path == [
                Element(tag: "Swift.Int", value: .number(JSONNumber(UInt64(1)))),
                Element(tag: "Swift.Int", value: .number(JSONNumber(UInt64(2)))),
            ])
    }

    @Test func values() throws {
        let untyped = try PathInput.values(["42", #""text""#, #"{"applePie":{}}"#], type: nil)
        #expect(untyped.map(\.tag) == [nil, nil, nil])
        #expect(
            untyped.map(\.value) == [
                .number(JSONNumber(UInt64(42))), .string("text"), try JSONParser.parse(bytes(#"{"applePie":{}}"#)),
            ])
        let typed = try PathInput.values(["1", "2"], type: "Swift.Int")
        #expect(typed.map(\.tag) == ["Swift.Int", "Swift.Int"])
        #expect(throws: PathInput.Failure.self) { try PathInput.values(["1", "text"], type: nil) }
        do {
            _ = try PathInput.values(["1", "{"], type: nil)
            Issue.record("accepted an unparsable value")
        } catch {
            guard case .invalidValue(let position, _) = error else {
                Issue.record("wrong failure \(error)")
                return
            }
            #expect(position == 2)
        }
    }
}
