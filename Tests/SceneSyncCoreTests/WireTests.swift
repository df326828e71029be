import Testing

@testable import SceneSyncCore

@Suite("Wire")
struct WireTests {
    static func codableScene() throws -> SceneState {
        let decoded = try SceneFileCodec().decode(utf8(Fixtures.emojiCodablePretty))
        return SceneState(
            id: try sceneID("main"), version: 3, created: 1, modified: 7, format: .codable, path: decoded.path,
            layout: decoded.layout)
    }

    static func arrayScene() throws -> SceneState {
        let decoded = try SceneFileCodec().decode(utf8(Fixtures.recipeArrayPretty))
        return SceneState(
            id: try sceneID("list"), version: 1, created: 2, modified: 2, format: .array, path: decoded.path,
            layout: decoded.layout)
    }

    /// Parses `bytes` as one JSON object and requires it to fit on one line.
    func object(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
        #expect(!bytes.contains(UInt8(ascii: "\n")), "not one line: \(text(bytes))", sourceLocation: sourceLocation)
        let value = try parseJSON(bytes, sourceLocation: sourceLocation)
        _ = try #require(value.objectValue, sourceLocation: sourceLocation)
        return value
    }

    // MARK: - Scenes

    @Test("a scene on the wire has exactly the documented fields, its path root first and compact")
    func scene() throws {
        let state = try Self.codableScene()
        var out: [UInt8] = []
        Wire.appendScene(state, to: &out)
        let json = try object(out)
        #expect(json.objectValue?.keys == ["scene", "version", "created", "modified", "format", "path"])
        #expect(json["scene"] == .string("main"))
        #expect(json["version"]?.uint64Value == 3)
        #expect(json["created"]?.uint64Value == 1)
        #expect(json["modified"]?.uint64Value == 7)
        #expect(json["format"] == .string("codable"))
        #expect(
            text(out)
                == #"{"scene":"main","version":3,"created":1,"modified":7,"format":"codable","path":[{"type":"Swift.Int","value":99},{"type":"NavigationBackportApp.EmojiVisualisation","value":{"count":99,"emoji":"🎈"}}]}"#
        )
        #expect(
            try Wire.decodeScene(json)
                == SceneState(
                    id: state.id, version: 3, created: 1, modified: 7, format: .codable, path: state.path))
    }

    @Test("pretty-printed array values are compacted to one line")
    func arrayScene() throws {
        var out: [UInt8] = []
        Wire.appendScene(try Self.arrayScene(), to: &out)
        let json = try object(out)
        #expect(json["format"] == .string("array"))
        let path = try #require(json["path"]?.arrayValue)
        #expect(path.count == 2)
        for element in path {
            #expect(element.objectValue?.keys == ["value"])
        }
        #expect(text(out).hasSuffix(#""path":[{"value":{"applePie":{}}},{"value":{"chocolateCake":{}}}]}"#))
    }

    @Test("a missing scene is null")
    func missingScene() {
        var out: [UInt8] = []
        Wire.appendScene(nil, to: &out)
        #expect(text(out) == "null")
    }

    // MARK: - Changes

    static func changeRecords() throws -> [ChangeRecord] {
        let state = try codableScene()
        let origin = Origin(source: .client, client: "cli \"x\"", uid: 1000, pid: -1)
        return [
            ChangeRecord(
                clock: Clock(epoch: "e1", revision: 7), scene: state.id, kind: .set, version: 3, format: .codable,
                path: state.path, origin: origin),
            ChangeRecord(
                clock: Clock(epoch: "e1", revision: 8), scene: state.id, kind: .delete, version: 3, format: .codable,
                path: nil, origin: .file),
            ChangeRecord(
                clock: Clock(epoch: "e1", revision: 9), scene: state.id, kind: .set, version: 1, format: .array,
                path: try arrayScene().path, origin: .file,
                conflict: Conflict(path: state.path, origin: origin)),
            ChangeRecord(
                clock: Clock(epoch: "e:2", revision: .max), scene: state.id, kind: .set, version: 1, format: .array,
                path: [], origin: Origin(source: .client), conflict: Conflict(path: [], origin: .file)),
        ]
    }

    @Test("change members have exactly the documented fields")
    func changeFields() throws {
        let records = try Self.changeRecords()
        let expectedKeys: [[String]] = [
            ["epoch", "revision", "scene", "kind", "version", "format", "path", "origin"],
            ["epoch", "revision", "scene", "kind", "version", "format", "origin"],
            ["epoch", "revision", "scene", "kind", "version", "format", "path", "origin", "conflict"],
            ["epoch", "revision", "scene", "kind", "version", "format", "path", "origin", "conflict"],
        ]
        for (record, keys) in zip(records, expectedKeys) {
            var out: [UInt8] = utf8(#"{"event":"change","subscription":1,"#)
            Wire.appendChangeMembers(record, to: &out)
            out.append(UInt8(ascii: "}"))
            let json = try object(out)
            #expect(json.objectValue?.keys == ["event", "subscription"] + keys)
            #expect(json["epoch"]?.stringValue == record.clock.epoch)
            #expect(json["revision"]?.uint64Value == record.clock.revision)
            #expect(json["kind"]?.stringValue == record.kind.rawValue)
            #expect(json["format"]?.stringValue == record.format.rawValue)
            if let conflict = json["conflict"] {
                #expect(conflict.objectValue?.keys == ["path", "origin"])
            }
        }
        var out: [UInt8] = []
        Wire.appendChangeRecord(records[0], to: &out)
        let json = try object(out)
        #expect(json["origin"]?.objectValue?.keys == ["source", "client", "uid", "pid"])
        #expect(json["origin"]?["client"] == .string("cli \"x\""))
        #expect(json["origin"]?["pid"]?.int64Value == -1)
        var fileOrigin: [UInt8] = []
        Wire.appendOrigin(.file, to: &fileOrigin)
        #expect(text(fileOrigin) == #"{"source":"file"}"#)
    }

    /// Found by the JSON parser fuzzer (Fuzz/JSONParser): an element's wire form nests one level deeper than its
    /// value, and a codable item may nest the full 256 levels (§3), so the lines carrying it nest deeper than the
    /// contract's limit. The client parsed them with that limit and dropped the connection as a protocol violation,
    /// for every event of such a scene, again after each reconnect.
    @Test("lines carrying the deepest item the contract allows parse with Wire.maxLineNesting, not less")
    func deepestLines() throws {
        let deepest = nestedArrays(JSONParser.defaultMaxNesting)
        let decoded = try SceneFileCodec().decode(utf8(#"["A.b",""# + deepest + #""]"#))
        #expect(decoded.format == .codable)
        let record = ChangeRecord(
            clock: Clock(epoch: "e", revision: 2), scene: try sceneID("s"), kind: .set, version: 2, format: .codable,
            path: decoded.path, origin: .file, conflict: Conflict(path: decoded.path, origin: .file))
        // The deepest line: a history answer's record's conflict (answer, records, record, conflict, path, element).
        var history = utf8(#"{"id":1,"ok":true,"records":["#)
        Wire.appendChangeRecord(record, to: &history)
        history.append(contentsOf: utf8("]}"))
        #expect(try JSONParser.parse(history, maxNesting: Wire.maxLineNesting)["records"] != nil)
        #expect(throws: JSONError.tooDeep(limit: Wire.maxLineNesting - 1)) {
            try JSONParser.parse(history, maxNesting: Wire.maxLineNesting - 1)
        }
        // A change event already nests deeper than a request may.
        var event = utf8(#"{"event":"change","subscription":1,"#)
        Wire.appendChangeMembers(record, to: &event)
        event.append(UInt8(ascii: "}"))
        #expect(throws: JSONError.tooDeep(limit: JSONParser.defaultMaxNesting)) { try JSONParser.parse(event) }
        let parsed = try JSONParser.parse(event, maxNesting: Wire.maxLineNesting)
        #expect(try Wire.decodeChange(parsed) == record)
    }

    @Test("decodeChange reads back what appendChangeRecord wrote")
    func changeRoundTrip() throws {
        for record in try Self.changeRecords() {
            var out: [UInt8] = []
            Wire.appendChangeRecord(record, to: &out)
            #expect(try Wire.decodeChange(try object(out)) == record)
        }
    }

    @Test(
        "malformed change records are bad requests",
        arguments: [
            "{}", #"{"epoch":"e","revision":1,"scene":"a","kind":"set","version":1}"#,
            #"{"epoch":"e","revision":1,"scene":"a","kind":"move","version":1,"format":"array"}"#,
            #"{"epoch":"e","revision":-1,"scene":"a","kind":"set","version":1,"format":"array"}"#,
            #"{"epoch":"e","revision":1,"scene":".a","kind":"set","version":1,"format":"array"}"#,
            #"{"epoch":1,"revision":1,"scene":"a","kind":"set","version":1,"format":"array"}"#,
            #"{"epoch":"e","revision":1,"scene":"a","kind":"set","version":1,"format":"array","path":[1]}"#,
            #"{"epoch":"e","revision":1,"scene":"a","kind":"set","version":1,"format":"array","path":{}}"#,
            #"{"epoch":"e","revision":1,"scene":"a","kind":"set","version":1,"format":"array","conflict":{"path":[{}]}}"#,
        ])
    func malformedChanges(_ json: String) throws {
        let value = try parseJSON(utf8(json))
        let error = #expect(throws: SceneSyncError.self) { try Wire.decodeChange(value) }
        #expect(error?.code == .badRequest)
    }

    // MARK: - Errors

    @Test("a conflict error carries the current scene")
    func conflictError() throws {
        let state = try Self.codableScene()
        var out: [UInt8] = []
        Wire.appendError(SceneSyncError(.conflict, "scene main is at version 3", current: state), to: &out)
        let json = try object(out)
        #expect(json.objectValue?.keys == ["code", "message", "current"])
        #expect(json["code"] == .string("conflict"))
        #expect(json["message"] == .string("scene main is at version 3"))
        #expect(try Wire.decodeScene(try #require(json["current"])).path == state.path)
    }

    @Test("a conflict over a missing scene carries current: null")
    func conflictErrorMissing() throws {
        var out: [UInt8] = []
        Wire.appendError(SceneSyncError(.conflict, "scene main does not exist"), to: &out)
        let json = try object(out)
        #expect(json.objectValue?.keys == ["code", "message", "current"])
        #expect(json["current"] == .null)
    }

    @Test("other errors have code and message only", arguments: ErrorCode.allCases.filter { $0 != .conflict })
    func otherErrors(_ code: ErrorCode) throws {
        var out: [UInt8] = []
        let state = try Self.codableScene()
        Wire.appendError(SceneSyncError(code, "line 1\nline \"2\"", current: state), to: &out)
        let json = try object(out)
        #expect(json.objectValue?.keys == ["code", "message"])
        #expect(json["code"] == .string(code.rawValue))
        #expect(json["message"] == .string("line 1\nline \"2\""))
    }

    @Test("error codes and warning codes are spelled as in the contract")
    func codes() {
        #expect(
            ErrorCode.allCases.map(\.rawValue) == [
                "bad_request", "unknown_op", "invalid_scene", "not_found", "conflict", "out_of_range", "too_large",
                "forbidden", "invalid_config", "unavailable", "internal",
            ])
        #expect(
            WarningCode.allCases.map(\.rawValue) == [
                "invalid_file", "file_too_large", "rescanned", "snapshot_failed", "write_failed",
                "cluster_unavailable", "cluster_restored",
            ])
        #expect(SceneSyncError(.notFound, "no scene x").description == "not_found: no scene x")
        #expect(SceneSyncError.badRequest("x") == SceneSyncError(.badRequest, "x"))
    }

    // MARK: - Paths

    @Test("decodePath reads elements with and without a type")
    func decodePath() throws {
        let json = try parseJSON(
            utf8(#"[{"type":"MyApp.Recipe","value":{"applePie":{}}},{"value":42},{"value":null,"extra":1}]"#))
        let path = try Wire.decodePath(json)
        #expect(path == [try typed("MyApp.Recipe", #"{"applePie":{}}"#), try untyped("42"), try untyped("null")])
        #expect(text(path[0].item) == #"{"applePie":{}}"#)
        #expect(try Wire.decodePath(.array([])) == [])
    }

    @Test("appendPath then decodePath gives back the path", arguments: Fixtures.all)
    func pathRoundTrip(_ fixture: FixtureFile) throws {
        let path = try fixture.expectedPath()
        var out: [UInt8] = []
        Wire.appendPath(path, to: &out)
        #expect(try Wire.decodePath(try parseJSON(out)) == path)
        #expect(!out.contains(UInt8(ascii: "\n")))
    }

    @Test(
        "malformed paths are bad requests",
        arguments: [
            "{}", "1", #""x""#, "null", "[1]", "[[]]", #"[{"type":"A.b"}]"#, #"[{}]"#, #"[{"type":"","value":1}]"#,
            #"[{"type":1,"value":1}]"#, #"[{"type":null,"value":1}]"#, #"[{"value":1},"x"]"#,
        ])
    func malformedPaths(_ json: String) throws {
        let value = try parseJSON(utf8(json))
        let error = #expect(throws: SceneSyncError.self) { try Wire.decodePath(value) }
        #expect(error?.code == .badRequest)
        #expect(error?.message.isEmpty == false)
    }

    @Test(
        "malformed scene objects are bad requests",
        arguments: [
            "{}", #"{"scene":"a"}"#, #"{"scene":"a","version":1,"format":"array"}"#,
            #"{"scene":"a b","version":1,"format":"array","path":[]}"#,
            #"{"scene":"a","version":1,"format":"text","path":[]}"#,
            #"{"scene":"a","version":"1","format":"array","path":[]}"#,
            #"{"scene":"a","version":1,"format":"array","path":[1]}"#,
        ])
    func malformedScenes(_ json: String) throws {
        let value = try parseJSON(utf8(json))
        let error = #expect(throws: SceneSyncError.self) { try Wire.decodeScene(value) }
        #expect(error?.code == .badRequest)
    }

    @Test("origins decode leniently")
    func origins() throws {
        #expect(
            Wire.decodeOrigin(try parseJSON(utf8(#"{"source":"client","client":"x","uid":5,"pid":6}"#)))
                == Origin(source: .client, client: "x", uid: 5, pid: 6))
        #expect(Wire.decodeOrigin(try parseJSON(utf8("{}"))) == .file)
        #expect(
            Wire.decodeOrigin(try parseJSON(utf8(#"{"source":"client","uid":-1,"pid":99999999999}"#)))
                == Origin(source: .client))
    }

    @Test("clocks")
    func clocks() {
        #expect(Clock(epoch: "e", revision: 3).description == "e:3")
        #expect(Clock(parsing: "e:3") == Clock(epoch: "e", revision: 3))
        #expect(Clock(parsing: "a:b:18446744073709551615") == Clock(epoch: "a:b", revision: .max))
        #expect(Clock(parsing: ":0") == Clock(epoch: "", revision: 0))
        #expect(Clock(parsing: "e") == nil)
        #expect(Clock(parsing: "e:") == nil)
        #expect(Clock(parsing: "e:-1") == nil)
        #expect(Clock(parsing: "e:x") == nil)
        #expect(Clock(parsing: "e:18446744073709551616") == nil)
        var out: [UInt8] = []
        Wire.appendClockMembers(Clock(epoch: "e", revision: 3), to: &out)
        #expect(text(out) == #""epoch":"e","revision":3"#)
    }
}
