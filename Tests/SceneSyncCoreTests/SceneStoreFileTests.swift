import Testing

@testable import SceneSyncCore

@Suite("SceneStore: file changes, conflicts and restore")
struct SceneStoreFileTests {
    let main: SceneID

    init() throws {
        main = try sceneID("main")
    }

    // MARK: - New scenes, changes, deletions

    @Test("a new file becomes a new scene", arguments: Fixtures.all)
    func newScene(_ fixture: FixtureFile) throws {
        var store = SceneStore(epoch: "e1", revision: 7)
        let record = try #require(store.applyFile(main, bytes: fixture.bytes).record)
        #expect(record.clock == Clock(epoch: "e1", revision: 8))
        #expect(record.kind == .set)
        #expect(record.version == 1)
        #expect(record.origin == .file)
        #expect(record.format == fixture.format ?? .array)
        #expect(record.path == (try fixture.expectedPath()))
        #expect(record.conflict == nil)
        let state = try #require(store.scene(main))
        #expect(state.version == 1)
        #expect(state.created == 8)
        #expect(state.modified == 8)
        #expect(state.fileBytes == fixture.bytes)
        #expect(store.fileDigest(main) == SceneStore.digest(fixture.bytes))
        #expect(store.history.records == [record])
    }

    @Test("a client set keeps the bytes of every element equal to the one at its position")
    func setKeepsEqualElements() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(#"[1.0, {"k" :1},"x"]"#))
        let plan = try store.plan(
            .set(
                path: [try untyped("1"), try untyped(#"{"k":1}"#), try untyped(#""y""#), try untyped("4")], format: nil),
            on: main, origin: .file)
        #expect(plan.fileBytes == utf8(#"[1.0,{"k" :1},"y",4]"#))
        // Equal tags and JSON-equal items in a codable scene keep the file's item too.
        var codable = SceneStore(epoch: "e1")
        _ = codable.applyFile(main, bytes: utf8(#"["A.b","1.0","A.c","{\"k\" :1}"]"#))
        let typedPlan = try codable.plan(
            .set(path: [try typed("A.c", #"{"k":1}"#), try typed("A.b", "1"), try typed("A.b", "2")], format: nil),
            on: main, origin: .file)
        #expect(typedPlan.fileBytes == utf8(#"["A.b","2","A.b","1.0","A.c","{\"k\" :1}"]"#))
    }

    @Test("an empty file under a pinned policy takes the pinned format")
    func newEmptyScenePinned() throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(policy: .codable))
        #expect(store.applyFile(main, bytes: utf8("[]")).record?.format == .codable)
        var arrays = SceneStore(epoch: "e1", codec: SceneFileCodec(policy: .array))
        #expect(arrays.applyFile(main, bytes: utf8("[]")).record?.format == .array)
    }

    @Test("the same content again is not a change, however it is spaced")
    func unchanged() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodable))
        let before = try #require(store.scene(main))
        #expect(store.applyFile(main, bytes: utf8(Fixtures.recipeCodable)) == .unchanged)
        // Pretty-printed, then with different number and key spellings: the same path.
        let respelled = #"[ "Swift.Int" , "42.0", "MyApp.Recipe", "{ \"applePie\" : { } }" ]"#
        let respelledCompact = #"["Swift.Int","4.2e1","MyApp.Recipe","{\"applePie\":{}}"]"#
        for file in [Fixtures.recipeCodablePretty, respelled, respelledCompact, Fixtures.recipeCodable] {
            #expect(store.applyFile(main, bytes: utf8(file)) == .unchanged)
            let state = try #require(store.scene(main))
            #expect(state.version == 1)
            #expect(state.path == before.path)
            // The state follows the file's bytes so that write-backs and snapshots reproduce them.
            #expect(state.fileBytes == utf8(file))
            #expect(store.fileDigest(main) == SceneStore.digest(utf8(file)))
        }
        #expect(store.revision == 1)
        #expect(store.history.count == 1)
    }

    @Test("a changed file is a change from the file")
    func changed() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodable))
        let record = try #require(store.applyFile(main, bytes: utf8(Fixtures.emojiCodable)).record)
        #expect(record.clock.revision == 2)
        #expect(record.version == 2)
        #expect(record.origin == .file)
        #expect(record.conflict == nil)
        #expect(record.path == (try Fixtures.all[1].expectedPath()))
        let state = try #require(store.scene(main))
        #expect(state.created == 1)
        #expect(state.modified == 2)
        #expect(state.fileBytes == utf8(Fixtures.emojiCodable))
        // A different format.
        let array = try #require(store.applyFile(main, bytes: utf8(Fixtures.intArray)).record)
        #expect(array.format == .array)
        #expect(array.version == 3)
        // An empty file keeps the format.
        let emptied = try #require(store.applyFile(main, bytes: utf8("[]")).record)
        #expect(emptied.format == .array)
        #expect(emptied.path == [])
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodable))
        #expect(store.applyFile(main, bytes: utf8(" [ ] ")).record?.format == .codable)
        #expect(store.scene(main)?.fileBytes == utf8(" [ ] "))
        #expect(store.revision == 6)
    }

    @Test("a deleted file deletes the scene")
    func deleted() throws {
        var store = SceneStore(epoch: "e1")
        #expect(store.applyFile(main, bytes: nil) == .unchanged)
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodable))
        _ = store.applyFile(main, bytes: utf8(Fixtures.emojiCodable))
        let record = try #require(store.applyFile(main, bytes: nil).record)
        #expect(record.kind == .delete)
        #expect(record.version == 3)
        #expect(record.format == .codable)
        #expect(record.path == nil)
        #expect(record.origin == .file)
        #expect(record.conflict == nil)
        #expect(record.clock.revision == 3)
        #expect(store.scene(main) == nil)
        #expect(store.fileDigest(main) == nil)
        #expect(store.applyFile(main, bytes: nil) == .unchanged)
        #expect(store.revision == 3)
        // Re-created: version 1 again.
        #expect(store.applyFile(main, bytes: utf8("[1]")).record?.version == 1)
        #expect(store.scene(main)?.created == 4)
    }

    // MARK: - Rejections

    @Test("a rejected file changes nothing; the next good file is merged", arguments: SceneFileCodecTests.rejections)
    func rejected(_ rejection: SceneFileCodecTests.Rejection) throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(maxFileBytes: 5000, maxDepth: 10))
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodable))
        let before = try #require(store.scene(main))
        let history = store.history.records
        let outcome = store.applyFile(main, bytes: rejection.bytes)
        guard case .rejected(let error) = outcome else {
            Issue.record("expected a rejection, got \(outcome)")
            return
        }
        #expect(rejection.check(error))
        #expect(error.warningCode == rejection.code)
        #expect(store.scene(main) == before)
        #expect(store.revision == 1)
        #expect(store.history.records == history)
        #expect(store.fileDigest(main) == SceneStore.digest(utf8(Fixtures.recipeCodable)))
        // Fixed: merged normally.
        let record = try #require(store.applyFile(main, bytes: utf8(Fixtures.intArray)).record)
        #expect(record.version == 2)
        #expect(record.conflict == nil)
        // A rejected file for a new scene creates nothing.
        let fresh = try sceneID("fresh")
        #expect(store.applyFile(fresh, bytes: rejection.bytes) == .rejected(error))
        #expect(store.scene(fresh) == nil)
        #expect(store.revision == 2)
    }

    @Test("a pinned format rejects files that do not fit it")
    func pinnedRejections() throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(policy: .codable))
        #expect(store.applyFile(main, bytes: utf8("[1,2,3]")) == .rejected(.oddLength(count: 3)))
        #expect(store.applyFile(main, bytes: utf8(Fixtures.recipeArray)) == .rejected(.notAString(index: 0)))
        #expect(store.scene(main) == nil)
        #expect(store.applyFile(main, bytes: utf8(Fixtures.recipeCodable)).record?.format == .codable)
        // Pinned array: a codable-looking file is an array path of strings.
        var arrays = SceneStore(epoch: "e1", codec: SceneFileCodec(policy: .array))
        let record = try #require(arrays.applyFile(main, bytes: utf8(Fixtures.recipeCodable)).record)
        #expect(record.format == .array)
        #expect(record.path?.count == 4)
    }

    // MARK: - The daemon's own writes

    @Test("reading back the daemon's own write is not a change")
    func ownWrite() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodablePretty))
        let plan = try store.plan(.push([try typed("Swift.Int", "7")]), on: main, origin: clientOrigin)
        let bytes = try #require(plan.fileBytes)
        store.commit(plan)
        #expect(store.fileDigest(main) == SceneStore.digest(bytes))
        #expect(store.applyFile(main, bytes: bytes) == .unchanged)
        #expect(store.revision == 2)
        #expect(store.scene(main)?.version == 2)
    }

    /// Under `auto`, an array path of strings such as `["A.b","1"]` reads as a codable path. The daemon wrote that
    /// file itself, so reading it back must not produce a second revision.
    @Test("reading back an array scene whose file looks codable is not a change")
    func ownWriteOfAmbiguousArray() throws {
        var store = SceneStore(epoch: "e1")
        let path = [try untyped(#""MyApp.Recipe""#), try untyped(#""42""#)]
        let plan = try store.plan(.set(path: path, format: nil), on: main, origin: clientOrigin)
        let bytes = try #require(plan.fileBytes)
        #expect(text(bytes) == #"["MyApp.Recipe","42"]"#)
        store.commit(plan)
        #expect(store.applyFile(main, bytes: bytes) == .unchanged)
        #expect(store.scene(main)?.format == .array)
        #expect(store.scene(main)?.path == path)
        #expect(store.revision == 1)
        // Written by the app, the same content is what auto detection says it is: a codable path.
        let other = try sceneID("other")
        #expect(store.applyFile(other, bytes: bytes).record?.format == .codable)
    }

    @Test("a client push onto a file-derived scene writes the unchanged elements back byte for byte")
    func pushKeepsFileBytes() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(Fixtures.slashCodableBoth))
        let plan = try store.plan(.push([try typed("MyApp.Recipe", #"{"x":1}"#)]), on: main, origin: clientOrigin)
        #expect(
            plan.fileBytes.map(text)
                == #"["MyApp.Recipe","{\"x\":1}","MyApp.Link","{\"url\":\"https:\\\/\\\/x\"}"]"#)
        store.commit(plan)
        let popped = try store.plan(.pop(count: 1), on: main, origin: clientOrigin)
        #expect(popped.fileBytes == utf8(Fixtures.slashCodableBoth))

        let list = try sceneID("list")
        _ = store.applyFile(list, bytes: utf8(Fixtures.recipeArrayPretty))
        try store.apply(.push([try untyped("3")]), on: list)
        let first = "{\n    \"applePie\" : {\n\n    }\n  }"
        let second = "{\n    \"chocolateCake\" : {\n\n    }\n  }"
        #expect(store.scene(list)?.fileBytes == utf8("[" + first + "," + second + ",3]"))
        // The wire shows them compact all the same.
        var wire: [UInt8] = []
        Wire.appendPath(store.scene(list)?.path ?? [], to: &wire)
        #expect(text(wire) == #"[{"value":{"applePie":{}}},{"value":{"chocolateCake":{}}},{"value":3}]"#)
    }

    /// Found by the scene file fuzzer: the client's changes rewrote tags spelled with escapes (§3: never rewritten).
    @Test("client changes keep a file's spelling of the unchanged elements' tags")
    func clientChangesKeepTagSpelling() throws {
        var store = SceneStore(epoch: "e1")
        let file = #"["My\/App.Link","1","Caf\u00e9.X","2"]"#
        _ = store.applyFile(main, bytes: utf8(file))
        let pushed = try store.plan(.push([try typed("Swift.Int", "3")]), on: main, origin: clientOrigin)
        #expect(pushed.fileBytes.map(text) == #"["Swift.Int","3","# + file.dropFirst())
        let popped = try store.plan(.pop(count: 1), on: main, origin: clientOrigin)
        #expect(popped.fileBytes.map(text) == #"["Caf\u00e9.X","2"]"#)
        // A set of the same tags as a client sends them (unescaped) keeps the file's spelling too.
        let set = try store.plan(
            .set(path: [try typed("Café.X", "2"), try typed("My/App.Link", "1"), try typed("A.b", "4")], format: nil),
            on: main, origin: clientOrigin)
        #expect(set.fileBytes.map(text) == #"["A.b","4","# + file.dropFirst())
    }

    // MARK: - Conflicts

    @Test("a client change over a file change the daemon had not read records the overwritten state")
    func clientOverUnreadFile() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try typed("Swift.Int", "1")], format: nil), on: main)
        // The app rewrote the file; before replacing it, the daemon merges that change…
        let appRecord = try #require(store.applyFile(main, bytes: utf8(Fixtures.recipeCodable)).record)
        #expect(appRecord.conflict == nil)
        #expect(appRecord.version == 2)
        // …and the client's change then keeps it as the conflict.
        let plan = try store.plan(
            .push([try typed("Swift.Int", "2")]), on: main, origin: clientOrigin, overwritingUnreadFile: true)
        let committed = store.commit(plan)
        let record = try #require(committed)
        let conflict = try #require(record.conflict)
        #expect(conflict.path == (try Fixtures.all[0].expectedPath()))
        #expect(conflict.origin == .file)
        #expect(record.origin == clientOrigin)
        #expect(record.version == 3)
        #expect(record.path?.count == 3)
        #expect(store.history.records.last == record)
    }

    @Test("a client change over a client change records the other client as the overwritten origin")
    func conflictOrigin() throws {
        var store = SceneStore(epoch: "e1")
        let first = Origin(source: .client, client: "first", uid: 1, pid: 2)
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main, origin: first)
        let plan = try store.plan(
            .set(path: [try untyped("2")], format: nil), on: main, origin: clientOrigin, overwritingUnreadFile: true)
        let committed = store.commit(plan)
        #expect(committed?.conflict == Conflict(path: [try untyped("1")], origin: first))
        // Deleting over an unread change keeps it too.
        let deletion = try store.plan(.delete, on: main, origin: clientOrigin, overwritingUnreadFile: true)
        let deleted = store.commit(deletion)
        #expect(deleted?.conflict == Conflict(path: [try untyped("2")], origin: clientOrigin))
        #expect(deleted?.kind == .delete)
    }

    @Test("without an unread file change, client changes carry no conflict")
    func noConflictNormally() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(Fixtures.recipeCodable))
        let record = try store.apply(.push([try typed("Swift.Int", "2")]), on: main)
        #expect(record?.conflict == nil)
        // A creation over nothing has nothing to keep, even when asked to.
        let fresh = try sceneID("fresh")
        let plan = try store.plan(
            .push([try untyped("1")]), on: fresh, origin: clientOrigin, overwritingUnreadFile: true)
        let committed = store.commit(plan)
        #expect(committed?.conflict == nil)
        // A no-op over an unread change is still a no-op.
        let noOp = try store.plan(.pop(count: 0), on: fresh, origin: clientOrigin, overwritingUnreadFile: true)
        #expect(noOp.isNoOp)
    }

    /// A file write is based on the last content the daemon read from or wrote to the file (§4). `commit` means the
    /// daemon wrote the client's change to the file, so an app's later write is based on it: no conflict.
    @Test("a file change after a committed client change is based on it")
    func fileAfterClientChange() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8(Fixtures.intArray))
        try store.apply(.push([try untyped("4")]), on: main)
        let record = try #require(store.applyFile(main, bytes: utf8("[9]")).record)
        #expect(record.conflict == nil)
        #expect(record.version == 3)
        try store.apply(.push([try untyped("5")]), on: main)
        let deletion = try #require(store.applyFile(main, bytes: nil).record)
        #expect(deletion.conflict == nil)
    }

    // MARK: - Restore

    @Test("restore puts a scene back without a revision")
    func restore() throws {
        var store = SceneStore(epoch: "e2", revision: 40)
        let decoded = try SceneFileCodec().decode(utf8(Fixtures.recipeCodablePretty))
        let state = SceneState(
            id: main, version: 5, created: 3, modified: 39, format: .codable, path: decoded.path, layout: decoded.layout
        )
        store.restore(state)
        #expect(store.scene(main) == state)
        #expect(store.revision == 40)
        #expect(store.history.count == 0)
        #expect(store.fileDigest(main) == nil)
        // The file as the snapshot holds it: unchanged.
        #expect(store.applyFile(main, bytes: state.fileBytes) == .unchanged)
        #expect(store.revision == 40)
        #expect(store.fileDigest(main) == SceneStore.digest(state.fileBytes))
    }

    @Test("a file that differs from the restored scene is a change from the file, not a conflict")
    func restoreThenChangedFile() throws {
        var store = SceneStore(epoch: "e2", revision: 40)
        let state = SceneState(
            id: main, version: 5, created: 3, modified: 39, format: .array, path: [try untyped("1")])
        store.restore(state)
        let record = try #require(store.applyFile(main, bytes: utf8("[1,2]")).record)
        #expect(record.version == 6)
        #expect(record.clock.revision == 41)
        #expect(record.conflict == nil)
        #expect(store.scene(main)?.created == 3)
        #expect(store.scene(main)?.modified == 41)
        store.restore(state)
        let deletion = try #require(store.applyFile(main, bytes: nil).record)
        #expect(deletion.conflict == nil)
        #expect(deletion.version == 6)
    }

    @Test("a restored array scene whose file looks codable reads back unchanged")
    func restoreAmbiguousArray() throws {
        var store = SceneStore(epoch: "e2", revision: 1)
        let state = SceneState(
            id: main, version: 1, created: 1, modified: 1, format: .array,
            path: [try untyped(#""A.b""#), try untyped(#""1""#)])
        store.restore(state)
        #expect(store.applyFile(main, bytes: state.fileBytes) == .unchanged)
        #expect(store.scene(main) == state)
    }

    @Test("noteFileWritten records the bytes written outside a commit")
    func noteFileWritten() throws {
        var store = SceneStore(epoch: "e1")
        store.noteFileWritten(main, bytes: utf8("[1]"))
        #expect(store.fileDigest(main) == nil)
        #expect(store.scene(main) == nil)
        store.restore(SceneState(id: main, version: 1, created: 1, modified: 1, format: .array, path: []))
        store.noteFileWritten(main, bytes: utf8("[]"))
        #expect(store.fileDigest(main) == SceneStore.digest(utf8("[]")))
        #expect(store.revision == 0)
    }

    @Test("the file digest is FNV-1a 64")
    func digest() {
        #expect(SceneStore.digest([]) == 0xcbf2_9ce4_8422_2325)
        #expect(SceneStore.digest(utf8("a")) == 0xaf63_dc4c_8601_ec8c)
        #expect(SceneStore.digest(utf8("foobar")) == 0x8594_4171_f739_67e8)
    }
}
