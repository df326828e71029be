import SceneSyncTestKit
import Testing

@testable import SceneSyncCore

let clientOrigin = Origin(source: .client, client: "test", uid: 1000, pid: 42)

extension SceneStore {
    /// Plans and commits a client change, as the daemon does after writing the file.
    @discardableResult
    mutating func apply(
        _ operation: Operation, on id: SceneID, ifVersion: UInt64? = nil, origin: Origin = clientOrigin
    ) throws(SceneSyncError) -> ChangeRecord? {
        let plan = try plan(operation, on: id, ifVersion: ifVersion, origin: origin)
        return commit(plan)
    }
}

/// The error a store operation throws; records an issue when it does not throw.
func storeError(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> SceneSyncError? {
    do {
        try body()
    } catch let error as SceneSyncError {
        return error
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        return nil
    }
    Issue.record("expected an error", sourceLocation: sourceLocation)
    return nil
}

extension SceneStore.FileOutcome {
    var record: ChangeRecord? {
        if case .changed(let record) = self { return record }
        return nil
    }
}

@Suite("SceneStore: client changes")
struct SceneStoreClientTests {
    let main: SceneID
    let other: SceneID

    init() throws {
        main = try sceneID("main")
        other = try sceneID("other")
    }

    // MARK: - set

    @Test("set creates a scene at version 1 and revision 1")
    func setCreates() throws {
        var store = SceneStore(epoch: "e1")
        let path = [try typed("MyApp.Recipe", #"{"applePie":{}}"#), try typed("Swift.Int", "42")]
        let plan = try store.plan(.set(path: path, format: nil), on: main, origin: clientOrigin)
        // Planning changes nothing.
        #expect(store.revision == 0)
        #expect(store.scene(main) == nil)
        #expect(!plan.isNoOp)
        #expect(plan.scene == main)
        #expect(plan.fileBytes.map(text) == Fixtures.recipeCodable)
        #expect(plan.state?.version == 1)
        let committed = store.commit(plan)
        let record = try #require(committed)
        #expect(record.clock == Clock(epoch: "e1", revision: 1))
        #expect(record.scene == main)
        #expect(record.kind == .set)
        #expect(record.version == 1)
        #expect(record.format == .codable)
        #expect(record.path == path)
        #expect(record.origin == clientOrigin)
        #expect(record.conflict == nil)
        let state = try #require(store.scene(main))
        #expect(state.version == 1)
        #expect(state.created == 1)
        #expect(state.modified == 1)
        #expect(state.format == .codable)
        #expect(state.path == path)
        #expect(state.layout == nil)
        #expect(state.fileBytes == utf8(Fixtures.recipeCodable))
        #expect(store.revision == 1)
        #expect(store.clock == Clock(epoch: "e1", revision: 1))
        #expect(store.count == 1)
        #expect(store.history.records == [record])
        #expect(store.fileDigest(main) == SceneStore.digest(utf8(Fixtures.recipeCodable)))
    }

    @Test("versions count a scene's changes, revisions count every change")
    func versionsAndRevisions() throws {
        var store = SceneStore(epoch: "e1", revision: 100)
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        try store.apply(.push([try untyped("2")]), on: other)
        try store.apply(.push([try untyped("3")]), on: main)
        try store.apply(.pop(count: 1), on: main)
        let state = try #require(store.scene(main))
        #expect(state.version == 3)
        #expect(state.created == 101)
        #expect(state.modified == 104)
        let otherState = try #require(store.scene(other))
        #expect(otherState.version == 1)
        #expect(otherState.created == 102)
        #expect(otherState.modified == 102)
        #expect(store.revision == 104)
        #expect(store.history.records.map(\.clock.revision) == [101, 102, 103, 104])
        #expect(store.history.records.map(\.version) == [1, 1, 2, 3])
        #expect(store.scenes.map(\.id) == [main, other])
        #expect(Set(store.sceneIDs) == [main, other])
    }

    @Test("a re-created scene starts again at version 1")
    func recreate() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        try store.apply(.push([try untyped("2")]), on: main)
        let deletionResult = try store.apply(.delete, on: main)
        let deletion = try #require(deletionResult)
        #expect(deletion.kind == .delete)
        // A deletion is a change: the deleted scene's last version + 1 (§4).
        #expect(deletion.version == 3)
        #expect(deletion.format == .array)
        #expect(deletion.path == nil)
        #expect(deletion.clock.revision == 3)
        #expect(store.scene(main) == nil)
        #expect(store.count == 0)
        let createdResult = try store.apply(.push([try typed("A.b", "1")]), on: main)
        let created = try #require(createdResult)
        #expect(created.version == 1)
        let state = try #require(store.scene(main))
        #expect(state.version == 1)
        #expect(state.created == 4)
        #expect(state.modified == 4)
        #expect(state.format == .codable)
    }

    @Test("the format of a new scene")
    func newSceneFormat() throws {
        var store = SceneStore(epoch: "e1")
        let ids = try (0..<6).map { try sceneID("s\($0)") }
        try store.apply(.set(path: [try typed("A.b", "1")], format: nil), on: ids[0])
        try store.apply(.set(path: [try untyped("1")], format: nil), on: ids[1])
        try store.apply(.set(path: [], format: nil), on: ids[2])
        try store.apply(.set(path: [], format: .codable), on: ids[3])
        try store.apply(.set(path: [try typed("A.b", "1")], format: .codable), on: ids[4])
        try store.apply(.set(path: [try untyped("1")], format: .array), on: ids[5])
        #expect(ids.map { store.scene($0)?.format } == [.codable, .array, .array, .codable, .codable, .array])
        #expect(store.scene(ids[2])?.fileBytes == utf8("[]"))
        #expect(store.scene(ids[2])?.version == 1)
        #expect(store.revision == 6)
    }

    @Test("an empty path keeps the scene's format; an empty scene takes the format of the next pushed elements")
    func emptySceneFormat() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try typed("A.b", "1")], format: nil), on: main)
        try store.apply(.set(path: [], format: nil), on: main)
        #expect(store.scene(main)?.format == .codable)
        #expect(store.scene(main)?.path.isEmpty == true)
        // Untyped elements onto the empty codable scene: it becomes an array scene.
        try store.apply(.push([try untyped("1")]), on: main)
        #expect(store.scene(main)?.format == .array)
        try store.apply(.popToRoot, on: main)
        #expect(store.scene(main)?.format == .array)
        try store.apply(.push([try typed("A.b", "2")]), on: main)
        #expect(store.scene(main)?.format == .codable)
        try store.apply(.pop(count: 1), on: main)
        #expect(store.scene(main)?.format == .codable)
        #expect(store.scene(main)?.version == 6)
    }

    @Test("set replaces the path and may change the format of a non-empty scene")
    func setReplaces() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1"), try untyped("2")], format: nil), on: main)
        let recordResult = try store.apply(.set(path: [try typed("A.b", "3")], format: nil), on: main)
        let record = try #require(recordResult)
        #expect(record.format == .codable)
        #expect(record.path == [try typed("A.b", "3")])
        #expect(store.scene(main)?.fileBytes == utf8(#"["A.b","3"]"#))
    }

    @Test("set rejects mixed paths and formats that do not fit the elements")
    func setBadRequests() throws {
        var store = SceneStore(epoch: "e1")
        let mixed = storeError { try store.apply(.set(path: [raw("A.b", "1"), raw(nil, "2")], format: nil), on: main) }
        #expect(mixed?.code == .badRequest)
        let typedAsArray = storeError { try store.apply(.set(path: [raw("A.b", "1")], format: .array), on: main) }
        #expect(typedAsArray?.code == .badRequest)
        let untypedAsCodable = storeError { try store.apply(.set(path: [raw(nil, "1")], format: .codable), on: main) }
        #expect(untypedAsCodable?.code == .badRequest)
        #expect(store.revision == 0)
        #expect(store.scene(main) == nil)
    }

    // MARK: - push

    @Test("push creates a missing scene and appends on top")
    func push() throws {
        var store = SceneStore(epoch: "e1")
        let createdResult = try store.apply(.push([try typed("MyApp.Recipe", #"{"applePie":{}}"#)]), on: main)
        let created = try #require(createdResult)
        #expect(created.version == 1)
        #expect(created.format == .codable)
        let pushedResult = try store.apply(.push([try typed("Swift.Int", "42")]), on: main)
        let pushed = try #require(pushedResult)
        #expect(pushed.version == 2)
        #expect(pushed.path == [try typed("MyApp.Recipe", #"{"applePie":{}}"#), try typed("Swift.Int", "42")])
        #expect(store.scene(main)?.fileBytes == utf8(Fixtures.recipeCodable))
        try store.apply(.push([try typed("A.b", "1"), try typed("A.b", "2")]), on: main)
        #expect(store.scene(main)?.path.map { text($0.item) } == [#"{"applePie":{}}"#, "42", "1", "2"])
        #expect(store.scene(main)?.version == 3)
    }

    @Test("push rejects what does not fit the scene")
    func pushBadRequests() throws {
        var store = SceneStore(epoch: "e1")
        let empty = storeError { try store.apply(.push([]), on: main) }
        #expect(empty?.code == .badRequest)
        let mixed = storeError { try store.apply(.push([raw("A.b", "1"), raw(nil, "2")]), on: main) }
        #expect(mixed?.code == .badRequest)
        try store.apply(.push([try typed("A.b", "1")]), on: main)
        let untypedOnCodable = storeError { try store.apply(.push([raw(nil, "2")]), on: main) }
        #expect(untypedOnCodable?.code == .badRequest)
        try store.apply(.push([try untyped("1")]), on: other)
        let typedOnArray = storeError { try store.apply(.push([raw("A.b", "2")]), on: other) }
        #expect(typedOnArray?.code == .badRequest)
        #expect(store.revision == 2)
        #expect(store.scene(main)?.version == 1)
        #expect(store.scene(other)?.version == 1)
    }

    // MARK: - pop

    @Test("pop removes from the top, to_root empties")
    func pop() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.push((1...5).map { raw(nil, "\($0)") }), on: main)
        try store.apply(.pop(count: 2), on: main)
        #expect(store.scene(main)?.path.map { text($0.item) } == ["1", "2", "3"])
        try store.apply(.pop(count: 1), on: main)
        #expect(store.scene(main)?.path.map { text($0.item) } == ["1", "2"])
        try store.apply(.pop(count: 2), on: main)
        #expect(store.scene(main)?.path.isEmpty == true)
        #expect(store.scene(main)?.format == .array)
        try store.apply(.push([try untyped("9"), try untyped("8")]), on: main)
        try store.apply(.popToRoot, on: main)
        #expect(store.scene(main)?.path.isEmpty == true)
        #expect(store.scene(main)?.version == 6)
        #expect(store.scene(main)?.fileBytes == utf8("[]"))
    }

    @Test("pop errors: missing scene, more than the depth, negative count")
    func popErrors() throws {
        var store = SceneStore(epoch: "e1")
        #expect(storeError { try store.apply(.pop(count: 1), on: main) }?.code == .notFound)
        #expect(storeError { try store.apply(.popToRoot, on: main) }?.code == .notFound)
        try store.apply(.push([try untyped("1"), try untyped("2")]), on: main)
        let tooMany = storeError { try store.apply(.pop(count: 3), on: main) }
        #expect(tooMany?.code == .outOfRange)
        #expect(tooMany?.current == nil)
        #expect(storeError { try store.apply(.pop(count: -1), on: main) }?.code == .badRequest)
        #expect(store.scene(main)?.depth == 2)
        #expect(store.revision == 1)
    }

    // MARK: - delete

    @Test("delete removes the scene; a missing scene is not_found")
    func delete() throws {
        var store = SceneStore(epoch: "e1")
        #expect(storeError { try store.apply(.delete, on: main) }?.code == .notFound)
        try store.apply(.push([try typed("A.b", "1")]), on: main)
        let plan = try store.plan(.delete, on: main, origin: clientOrigin)
        #expect(plan.state == nil)
        #expect(plan.fileBytes == nil)
        #expect(!plan.isNoOp)
        let committed = store.commit(plan)
        let record = try #require(committed)
        #expect(record.kind == .delete)
        #expect(record.format == .codable)
        #expect(record.version == 2)
        #expect(record.origin == clientOrigin)
        #expect(store.scene(main) == nil)
        #expect(store.fileDigest(main) == nil)
        #expect(storeError { try store.apply(.delete, on: main) }?.code == .notFound)
        #expect(store.revision == 2)
    }

    // MARK: - if_version

    @Test("if_version matching the scene's version lets the change through")
    func ifVersionMatches() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main, ifVersion: 0)
        try store.apply(.push([try untyped("2")]), on: main, ifVersion: 1)
        try store.apply(.pop(count: 1), on: main, ifVersion: 2)
        try store.apply(.popToRoot, on: main, ifVersion: 3)
        try store.apply(.set(path: [try untyped("5")], format: nil), on: main, ifVersion: 4)
        try store.apply(.delete, on: main, ifVersion: 5)
        #expect(store.revision == 6)
        #expect(store.scene(main) == nil)
        try store.apply(.push([try untyped("1")]), on: main, ifVersion: 0)
        #expect(store.scene(main)?.version == 1)
    }

    static let everyOperation: [SceneStore.Operation] = [
        .set(path: [Element(tag: nil, value: .bool(true))], format: nil), .push([Element(tag: nil, value: .null)]),
        .pop(count: 1), .popToRoot, .delete,
    ]

    @Test("if_version mismatch is a conflict carrying the current scene", arguments: everyOperation)
    func ifVersionConflict(_ operation: SceneStore.Operation) throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1"), try untyped("2")], format: nil), on: main)
        try store.apply(.push([try untyped("3")]), on: main)
        let current = try #require(store.scene(main))
        for expected in [0, 1, 3, 99] as [UInt64] {
            let error = storeError { try store.apply(operation, on: main, ifVersion: expected) }
            #expect(error?.code == .conflict)
            #expect(error?.current == current)
            #expect(error?.current?.version == 2)
        }
        #expect(store.revision == 2)
        #expect(store.scene(main) == current)
    }

    @Test("if_version on a missing scene is a conflict with no current scene", arguments: everyOperation)
    func ifVersionMissing(_ operation: SceneStore.Operation) throws {
        var store = SceneStore(epoch: "e1")
        let error = storeError { try store.apply(operation, on: main, ifVersion: 1) }
        #expect(error?.code == .conflict)
        #expect(error?.current == nil)
        #expect(store.revision == 0)
    }

    @Test("if_version 0 means only if the scene does not exist")
    func ifVersionZero() throws {
        var store = SceneStore(epoch: "e1")
        // Missing: set and push create, pop and delete are still not_found.
        #expect(storeError { try store.apply(.pop(count: 1), on: main, ifVersion: 0) }?.code == .notFound)
        #expect(storeError { try store.apply(.delete, on: main, ifVersion: 0) }?.code == .notFound)
        let created = try store.apply(.push([try untyped("1")]), on: main, ifVersion: 0)
        #expect(created?.version == 1)
        let error = storeError { try store.apply(.set(path: [raw(nil, "2")], format: nil), on: main, ifVersion: 0) }
        #expect(error?.code == .conflict)
        #expect(error?.current?.path == [try untyped("1")])
        #expect(error?.message.isEmpty == false)
    }

    // MARK: - No-ops

    @Test("a change to the current path is not a change")
    func noOps() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(
            .set(path: [try typed("A.b", #"{"a":1,"b":2}"#), try typed("Swift.Int", "1")], format: nil), on: main)
        let before = try #require(store.scene(main))
        let equalPaths: [[Element]] = [
            [try typed("A.b", #"{"a":1,"b":2}"#), try typed("Swift.Int", "1")],
            [try typed("A.b", #"{ "b" : 2.0, "a" : 1e0 }"#), try typed("Swift.Int", "10e-1")],
        ]
        for path in equalPaths {
            for format: SceneFormat? in [nil, .codable] {
                let plan = try store.plan(.set(path: path, format: format), on: main, origin: clientOrigin)
                #expect(plan.isNoOp)
                #expect(plan.fileBytes == nil)
                let committed = store.commit(plan)
                #expect(committed == nil)
            }
        }
        #expect(try store.plan(.pop(count: 0), on: main, origin: clientOrigin).isNoOp)
        let popped = try store.apply(.pop(count: 0), on: main)
        #expect(popped == nil)
        #expect(store.revision == 1)
        #expect(store.history.count == 1)
        #expect(store.scene(main) == before)
        // An empty scene: set [] and pop to root are no-ops whatever the format asked for.
        try store.apply(.popToRoot, on: main)
        #expect(try store.plan(.popToRoot, on: main, origin: clientOrigin).isNoOp)
        #expect(try store.plan(.set(path: [], format: nil), on: main, origin: clientOrigin).isNoOp)
        #expect(try store.plan(.set(path: [], format: .array), on: main, origin: clientOrigin).isNoOp)
        #expect(store.revision == 2)
        #expect(store.scene(main)?.version == 2)
    }

    @Test("a no-op ignores if_version only when it matches")
    func noOpWithIfVersion() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        #expect(
            try store.plan(.set(path: [try untyped("1")], format: nil), on: main, ifVersion: 1, origin: clientOrigin)
                .isNoOp)
        #expect(
            storeError {
                _ = try store.plan(
                    .set(path: [raw(nil, "1")], format: nil), on: main, ifVersion: 2, origin: clientOrigin)
            }?.code == .conflict)
    }

    // MARK: - Limits

    @Test("a path longer than max_depth is too_large; exactly max_depth is fine", arguments: SceneFormat.allCases)
    func depthLimit(_ format: SceneFormat) throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(maxDepth: 3))
        let make: (Int) -> Element = { raw(format == .codable ? "A.b" : nil, "\($0)") }
        try store.apply(.set(path: [make(1), make(2)], format: nil), on: main)
        try store.apply(.push([make(3)]), on: main)
        #expect(storeError { try store.apply(.push([make(4)]), on: main) }?.code == .tooLarge)
        #expect(
            storeError { try store.apply(.set(path: (1...4).map(make), format: nil), on: other) }?.code == .tooLarge)
        #expect(store.scene(main)?.depth == 3)
        #expect(store.scene(other) == nil)
        // The file written for a path of max_depth elements is one the store reads back.
        let bytes = try #require(store.scene(main)?.fileBytes)
        #expect(try store.codec.decode(bytes).path.count == 3)
        let outcome = store.applyFile(main, bytes: bytes)
        #expect(outcome == .unchanged)
    }

    @Test("a file larger than max_file_bytes is too_large; exactly max_file_bytes is fine")
    func sizeLimit() throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(maxFileBytes: 7))
        try store.apply(.set(path: [try untyped("1"), try untyped("2"), try untyped("3")], format: nil), on: main)
        #expect(store.scene(main)?.fileBytes.count == 7)
        let error = storeError { try store.apply(.push([raw(nil, "4")]), on: main) }
        #expect(error?.code == .tooLarge)
        #expect(
            storeError { try store.apply(.set(path: [raw(nil, "12345678")], format: nil), on: other) }?.code
                == .tooLarge)
        #expect(store.revision == 1)
    }

    // MARK: - Pinned formats

    @Test("a pinned codable policy refuses array paths")
    func pinnedCodable() throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(policy: .codable))
        #expect(storeError { try store.apply(.set(path: [raw(nil, "1")], format: nil), on: main) }?.code == .badRequest)
        #expect(storeError { try store.apply(.push([raw(nil, "1")]), on: main) }?.code == .badRequest)
        try store.apply(.set(path: [], format: nil), on: main)
        #expect(store.scene(main)?.format == .codable)
        #expect(storeError { try store.apply(.push([raw(nil, "1")]), on: main) }?.code == .badRequest)
        try store.apply(.push([try typed("A.b", "1")]), on: main)
        #expect(store.scene(main)?.format == .codable)
    }

    @Test("a pinned array policy refuses codable paths")
    func pinnedArray() throws {
        var store = SceneStore(epoch: "e1", codec: SceneFileCodec(policy: .array))
        #expect(
            storeError { try store.apply(.set(path: [raw("A.b", "1")], format: nil), on: main) }?.code == .badRequest)
        #expect(storeError { try store.apply(.push([raw("A.b", "1")]), on: main) }?.code == .badRequest)
        try store.apply(.set(path: [], format: nil), on: main)
        #expect(store.scene(main)?.format == .array)
        try store.apply(.push([try untyped("1")]), on: main)
        #expect(store.scene(main)?.format == .array)
    }

    @Test("committing a stale plan is a programming error")
    func stalePlan() async {
        await #expect(processExitsWith: .failure) {
            var store = SceneStore(epoch: "e1")
            guard let id = SceneID("main"), let a = SceneID("a") else { return }
            guard let plan = try? store.plan(.push([Element(tag: nil, value: .null)]), on: id, origin: .file),
                let other = try? store.plan(.push([Element(tag: nil, value: .null)]), on: a, origin: .file)
            else { return }
            store.commit(other)
            store.commit(plan)
        }
    }
}

@Suite("SceneStore: many scenes")
struct SceneStoreManyScenesTests {
    /// The store's index is its own hash table; insertions, deletions (which move entries around) and re-creations
    /// in random order must keep every scene findable.
    @Test("scenes stay findable through random creations and deletions", arguments: [1, 2, 3] as [UInt64])
    func manyScenes(_ seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var store = SceneStore(epoch: "e1", historyLimit: 10)
        var model: [SceneID: Int] = [:]
        let ids = try (0..<3_000).map { try sceneID("scene-\($0)") }
        for step in 0..<20_000 {
            let id = ids[rng.below(ids.count)]
            if rng.chance(60) {
                let value = step
                let outcome = store.applyFile(id, bytes: utf8("[\(value)]"))
                #expect(outcome.record != nil)
                model[id] = value
            } else {
                let outcome = store.applyFile(id, bytes: nil)
                #expect((outcome.record != nil) == (model[id] != nil))
                model[id] = nil
            }
            if step % 1_000 == 0 || step == 19_999 {
                #expect(store.count == model.count)
                #expect(Set(store.sceneIDs) == Set(model.keys))
                for id in ids {
                    let path = store.scene(id)?.path
                    #expect(path == model[id].map { [raw(nil, "\($0)")] }, "\(id)")
                    if let state = store.scene(id) { #expect(state.id == id) }
                }
            }
        }
        #expect(store.scenes.map(\.id) == model.keys.sorted())
    }
}
