import Testing

@testable import SceneSyncCore

@Suite("Snapshot")
struct SnapshotTests {
    /// Scenes of every kind: codable, array, pretty-printed, escapes, empty of each format.
    static func scenes() throws -> [SceneState] {
        var scenes: [SceneState] = []
        for (offset, fixture) in Fixtures.all.enumerated() {
            let decoded = try SceneFileCodec().decode(fixture.bytes)
            scenes.append(
                SceneState(
                    id: try sceneID("scene-\(Fixtures.all.count - offset)"), version: UInt64(offset + 1),
                    created: UInt64(offset), modified: UInt64(offset * 10), format: decoded.format ?? .array,
                    path: decoded.path, layout: decoded.layout))
        }
        scenes.append(
            SceneState(
                id: try sceneID("Empty.codable"), version: 3, created: 1, modified: 2, format: .codable, path: []))
        scenes.append(
            SceneState(
                id: try sceneID("ambiguous"), version: 1, created: 1, modified: 1, format: .array,
                path: [try untyped(#""A.b""#), try untyped(#""1""#)]))
        return scenes
    }

    static func snapshot() throws -> Snapshot {
        Snapshot(
            epoch: "epoch-\"1\"", revision: 12_345, time: "2026-11-21T08:46:35.123Z", reason: .signal,
            scenes: try scenes())
    }

    @Test("encode then decode gives back the snapshot, scenes sorted by ID")
    func roundTrip() throws {
        let snapshot = try Self.snapshot()
        let bytes = snapshot.encode()
        let decoded = try Snapshot.decode(bytes)
        #expect(decoded.epoch == snapshot.epoch)
        #expect(decoded.revision == 12_345)
        #expect(decoded.time == "2026-11-21T08:46:35.123Z")
        #expect(decoded.reason == .signal)
        let sorted = snapshot.scenes.sorted { $0.id < $1.id }
        #expect(decoded.scenes.map(\.id) == sorted.map(\.id))
        #expect(decoded.scenes == sorted)
        // Content byte for byte, pretty-printed files included.
        for (restored, original) in zip(decoded.scenes, sorted) {
            #expect(restored.fileBytes == original.fileBytes, "\(original.id)")
            #expect(restored.format == original.format)
        }
        #expect(try Snapshot.decode(decoded.encode()) == decoded)
        #expect(decoded.encode() == bytes)
    }

    @Test("the document has the documented shape")
    func shape() throws {
        let snapshot = try Self.snapshot()
        let json = try parseJSON(snapshot.encode())
        #expect(json.objectValue?.keys == ["format", "epoch", "revision", "time", "reason", "scenes"])
        #expect(json["format"] == .string("scenesync.snapshot/1"))
        #expect(json["epoch"] == .string("epoch-\"1\""))
        #expect(json["revision"]?.uint64Value == 12_345)
        #expect(json["reason"] == .string("signal"))
        let scenes = try #require(json["scenes"]?.arrayValue)
        #expect(scenes.count == snapshot.scenes.count)
        let names = scenes.compactMap { $0["scene"]?.stringValue }
        #expect(names == names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for scene in scenes {
            #expect(scene.objectValue?.keys == ["scene", "version", "created", "modified", "format", "content"])
            #expect(scene["content"]?.arrayValue != nil)
        }
        let pretty = try #require(scenes.first { $0["scene"]?.stringValue == "scene-10" })
        #expect(pretty["content"] == (try parseJSON(utf8(Fixtures.recipeCodablePretty))))
        #expect(snapshot.encode().last == UInt8(ascii: "\n"))
    }

    @Test("scenes decoded in chunks in any order come out in document order, and the first error is the document's")
    func chunksInAnyOrder() throws {
        let scenes = try (0..<5_000).map { index in
            SceneState(
                id: try sceneID("s" + String(repeating: "0", count: 5 - String(index).count) + String(index)),
                version: 1, created: 1, modified: 1, format: .array,
                path: try SceneFileCodec().decode(utf8("[\(index)]")).path)
        }
        let snapshot = Snapshot(epoch: "e", revision: 9, time: "t", reason: .request, scenes: scenes)
        var chunkCount = 0
        let backwards = try Snapshot.decode(snapshot.encode(), runBytes: 4096) { count, body in
            chunkCount = count
            return (0..<count).reversed().map(body).reversed()
        }
        #expect(chunkCount > 10)
        #expect(backwards == snapshot)
        #expect(try Snapshot.decode(snapshot.encode()) == snapshot)

        // Two bad scenes in different chunks: the first in the document is reported, whichever chunk ran first.
        var text = String(decoding: snapshot.encode(), as: UTF8.self)
        text = text.replacing(#""s00010","version":1"#, with: #""s00010","version":"x""#)
        text = text.replacing(#""content":[4000]"#, with: #""content":[4000,]"#)
        #expect(text.contains(#""s00010","version":"x""#) && text.contains(#""content":[4000,]"#))
        let inOrder = #expect(throws: SnapshotError.self) { try Snapshot.decode(utf8(text)) }
        let reversed = #expect(throws: SnapshotError.self) {
            try Snapshot.decode(utf8(text), runBytes: 4096) { count, body in
                (0..<count).reversed().map(body).reversed()
            }
        }
        #expect(inOrder != nil && inOrder == reversed)
        #expect(inOrder == .unreadable("malformed scene entry"))
    }

    @Test(
        "a run that starts inside a scene laid out over lines is decoded again from where the run before it stopped",
        arguments: [1, 7, 64, 333, 4096])
    func runsSplitInsideAScene(runBytes: Int) throws {
        // Each file holds `,` newline `{` between its own tokens, where a run may start; as may the last scene's
        // content, right before the array's end.
        let scenes = try (0..<300).map { index in
            let file = "[{\"a\":\(index)},\n{\"scene\":\"x\",\"version\":1},\n{\"b\":[\n1]}]\n"
            return SceneState(
                id: try sceneID("s" + String(repeating: "0", count: 3 - String(index).count) + String(index)),
                version: 2, created: 1, modified: 2, format: .array, path: try SceneFileCodec().decode(utf8(file)).path,
                layout: utf8(file))
        }
        let snapshot = Snapshot(epoch: "e", revision: 9, time: "t", reason: .request, scenes: scenes)
        let bytes = snapshot.encode()
        var runs = 0
        let decoded = try Snapshot.decode(bytes, runBytes: runBytes) { count, body in
            runs = count
            return (0..<count).reversed().map(body).reversed()
        }
        #expect(runs > 1)
        #expect(decoded == snapshot)
        #expect(decoded.encode() == bytes)
    }

    @Test("a foreign document stays foreign, whatever its scenes hold")
    func foreignWithBrokenScenes() {
        #expect(throws: SnapshotError.foreign) {
            try Snapshot.decode(utf8(#"{"format":"other","scenes":[{"scene":1},{"x":[1,2]}]}"#))
        }
    }

    @Test("an empty snapshot round-trips", arguments: Snapshot.Reason.allCases)
    func empty(_ reason: Snapshot.Reason) throws {
        let snapshot = Snapshot(epoch: "e", revision: 0, time: "1970-01-01T00:00:00.000Z", reason: reason, scenes: [])
        #expect(try Snapshot.decode(snapshot.encode()) == snapshot)
    }

    @Test("scene contents nested as deep as the contract allows round-trip")
    func deepContent() throws {
        let deep = nestedArrays(256)
        let decoded = try SceneFileCodec().decode(utf8(deep))
        let state = SceneState(
            id: try sceneID("deep"), version: 1, created: 1, modified: 1, format: .array, path: decoded.path)
        let snapshot = Snapshot(epoch: "e", revision: 1, time: "t", reason: .request, scenes: [state])
        let restored = try Snapshot.decode(snapshot.encode())
        #expect(restored.scenes.first?.fileBytes == utf8(deep))
    }

    @Test("snapshot limits do not apply: a scene accepted once is never lost to a smaller limit")
    func noLimits() throws {
        let path = try (0..<2_000).map { try typed("A.b", "\($0)") }
        let state = SceneState(
            id: try sceneID("big"), version: 1, created: 1, modified: 1, format: .codable, path: path)
        let snapshot = Snapshot(epoch: "e", revision: 1, time: "t", reason: .shutdown, scenes: [state])
        #expect(try Snapshot.decode(snapshot.encode()).scenes.first?.path == path)
    }

    // MARK: - File names

    @Test(
        "file names carry the revision as 20 digits",
        arguments: [
            (0, "snapshot-00000000000000000000.json"), (42, "snapshot-00000000000000000042.json"),
            (UInt64.max, "snapshot-18446744073709551615.json"),
        ] as [(UInt64, String)])
    func fileNames(_ revision: UInt64, _ name: String) {
        #expect(Snapshot.fileName(revision: revision) == name)
        #expect(Snapshot.revision(fromFileName: name) == revision)
    }

    @Test("file names sort like revisions")
    func fileNameOrder() {
        let revisions: [UInt64] = [9, 10, 100, 1, 99_999, 0, 18_446_744_073_709_551_615]
        let names = revisions.map(Snapshot.fileName(revision:))
        #expect(names.sorted().compactMap(Snapshot.revision(fromFileName:)) == revisions.sorted())
    }

    @Test(
        "other names are not snapshots",
        arguments: [
            "snapshot-1.json", "snapshot-0000000000000000004.json", "snapshot-000000000000000000042.json",
            "snapshot-0000000000000000004x.json", "snapshot-00000000000000000042.json.tmp",
            ".snapshot-00000000000000000042.json", "snapshot-00000000000000000042.jso",
            "snapshot-99999999999999999999.json", "Snapshot-00000000000000000042.json",
            "snapshot--0000000000000000042.json", "snapshot-+0000000000000000042.json",
            "snapshot-٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠٠.json",
            "",
        ])
    func notSnapshots(_ name: String) {
        #expect(Snapshot.revision(fromFileName: name) == nil)
    }

    // MARK: - Torn and foreign files

    @Test("every truncation of a snapshot is rejected")
    func torn() throws {
        let snapshot = try Self.snapshot()
        let bytes = snapshot.encode()
        var accepted = 0
        for length in 0..<bytes.count {
            let truncated = Array(bytes[..<length])
            if let decoded = try? Snapshot.decode(truncated) {
                // Only the final newline may go: the document is complete without it, and identical.
                #expect(length == bytes.count - 1)
                #expect(decoded == (try Snapshot.decode(bytes)))
                accepted += 1
            }
        }
        #expect(accepted <= 1)
    }

    @Test("torn writes of a small snapshot are rejected as unreadable")
    func tornSmall() throws {
        let state = SceneState(
            id: try sceneID("a"), version: 1, created: 1, modified: 1, format: .array, path: [try untyped("1")])
        let bytes = Snapshot(epoch: "e", revision: 1, time: "t", reason: .phase, scenes: [state]).encode()
        for length in 0..<(bytes.count - 1) {
            let error = #expect(throws: SnapshotError.self) { try Snapshot.decode(Array(bytes[..<length])) }
            if case .foreign = error { Issue.record("truncation at \(length) reported as foreign") }
        }
        // Garbage appended is not a snapshot either.
        #expect(throws: SnapshotError.self) { try Snapshot.decode(bytes + utf8("x")) }
        #expect(throws: SnapshotError.self) { try Snapshot.decode(bytes + [0]) }
    }

    @Test(
        "foreign documents are refused as foreign",
        arguments: [#"{"format":"other"}"#, #"{"format":"scenesync.snapshot/2","epoch":"e"}"#, #"{"format":1}"#])
    func foreign(_ json: String) {
        #expect(throws: SnapshotError.foreign) { try Snapshot.decode(utf8(json)) }
    }

    static let header = #""format":"scenesync.snapshot/1","epoch":"e","revision":1,"time":"t","reason":"signal""#
    static let goodScene = #"{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1]}"#

    @Test(
        "incomplete or malformed documents are unreadable",
        arguments: [
            "", "[]", "null", "{}", #"{"epoch":"e"}"#, #"{"format":"scenesync.snapshot/1"}"#,
            "{" + header + "}",
            #"{"format":"scenesync.snapshot/1","revision":1,"time":"t","reason":"signal","scenes":[]}"#,
            #"{"format":"scenesync.snapshot/1","epoch":"e","time":"t","reason":"signal","scenes":[]}"#,
            #"{"format":"scenesync.snapshot/1","epoch":"e","revision":-1,"time":"t","reason":"signal","scenes":[]}"#,
            #"{"format":"scenesync.snapshot/1","epoch":"e","revision":1,"reason":"signal","scenes":[]}"#,
            #"{"format":"scenesync.snapshot/1","epoch":"e","revision":1,"time":"t","scenes":[]}"#,
            #"{"format":"scenesync.snapshot/1","epoch":"e","revision":1,"time":"t","reason":"nap","scenes":[]}"#,
            #"{"format":"scenesync.snapshot/1","epoch":1,"revision":1,"time":"t","reason":"signal","scenes":[]}"#,
            "{" + header + #","scenes":{}}"#, "{" + header + #","scenes":[1]}"#,
            "{" + header + #","scenes":[{"scene":"a"}]}"#,
            "{" + header
                + #","scenes":[{"scene":"-bad","version":1,"created":1,"modified":1,"format":"array","content":[]}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"yaml","content":[]}]}"#,
            "{" + header + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array"}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":"1","created":1,"modified":1,"format":"array","content":[]}]}"#,
            "{" + header + #","scenes":[{"scene":"a","version":1,"modified":1,"format":"array","content":[]}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":{}}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"codable","content":[1]}]}"#,
            "{" + header + #","scenes":["# + goodScene + ",1]}",
            "{" + header + #","scenes":["# + goodScene + "]",
            // Damage inside a scene, found where the scene is decoded rather than in a pass over the whole document.
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1,]}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1],"x":tru}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"codable","content":["A.b","\q"]}]}"#,
            "{" + header + #","scenes":["# + goodScene + " " + goodScene + "]}",
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1] 2}]}"#,
            // Damage in the content, which is only skipped to its end where the members are found and checked where
            // it is decoded: balanced brackets around a bad value, brackets that do not close, a second content.
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1,tru]}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1,{]}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","version":1,"created":1,"modified":1,"format":"array","content":[1}]}"#,
            "{" + header
                + #","scenes":[{"scene":"a","content":[1,,2],"version":1,"created":1,"modified":1,"format":"array","content":[1]}]}"#,
            // Damage in a member this version does not read.
            "{" + header + #","extra":[1,,2],"scenes":["# + goodScene + "]}",
            // A repeated key keeps its last value: scenes that end up no array are no scenes.
            "{" + header + #","scenes":["# + goodScene + #"],"scenes":5}"#,
            "{" + header + #","scenes":["# + goodScene + #"],"scenes":{}}"#,
        ])
    func unreadable(_ json: String) {
        let error = #expect(throws: SnapshotError.self) { try Snapshot.decode(utf8(json)) }
        guard case .unreadable = error else {
            Issue.record("expected unreadable, got \(String(describing: error))")
            return
        }
    }

    @Test("a minimal hand-written snapshot decodes")
    func handWritten() throws {
        let snapshot = try Snapshot.decode(utf8("{" + Self.header + #", "scenes" : [ "# + Self.goodScene + " ] }"))
        #expect(snapshot.scenes.count == 1)
        #expect(snapshot.scenes[0].path == [try untyped("1")])
        #expect(snapshot.scenes[0].fileBytes == utf8("[1]"))
        #expect(SnapshotError.foreign.description.contains("scenesync.snapshot/1"))
        #expect(SnapshotError.unreadable("x").description.contains("x"))
    }
}
