import Testing

@testable import SceneSyncCore

@Suite("SceneStore: group commit batches")
struct ChangeBatchTests {
    let main: SceneID
    let other: SceneID

    init() throws {
        main = try sceneID("main")
        other = try sceneID("other")
    }

    @Test("changes to one scene build on each other and the file is written once, with the last content")
    func chained() throws {
        var store = SceneStore(epoch: "e1")
        var batch = store.makeBatch()
        try store.plan(.set(path: [try untyped("1")], format: nil), on: main, origin: clientOrigin, in: &batch)
        try store.plan(.push([try untyped("2")]), on: main, origin: clientOrigin, in: &batch)
        let third = try store.plan(.push([try untyped("3")]), on: main, origin: clientOrigin, in: &batch)
        #expect(third.state?.version == 3)
        #expect(third.state?.depth == 3)
        // Planning changes nothing.
        #expect(store.revision == 0)
        #expect(store.scene(main) == nil)
        let files = batch.finalFiles
        #expect(files.map(\.scene) == [main])
        #expect(files.first?.bytes.map(text) == "[1,2,3]")

        let records = store.commit(batch)
        #expect(records.map { $0?.clock.revision } == [1, 2, 3])
        #expect(store.scene(main)?.version == 3)
        #expect(store.fileDigest(main) == SceneStore.digest(utf8("[1,2,3]")))
    }

    @Test("an app's write displaced by the batch's file write comes first; the batch overwrites it as a conflict")
    func rebasedAfterADisplacedAppWrite() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8("[0]"))
        _ = store.applyFile(other, bytes: utf8("[5]"))
        var batch = store.makeBatch()
        try store.plan(.push([try untyped("1")]), on: main, origin: clientOrigin, in: &batch)
        try store.plan(.push([try untyped("6")]), on: other, origin: clientOrigin, in: &batch)
        try store.plan(.push([try untyped("2")]), on: main, origin: clientOrigin, in: &batch)
        // The batch's write of `main` displaced an app's write the daemon had not read: merged first.
        guard case .changed(let app) = store.applyFile(main, bytes: utf8("[9]")) else {
            Issue.record("the app's write is a change")
            return
        }
        #expect(app.clock.revision == 3)
        let rebased = store.rebase(batch, after: [main: app])
        #expect(rebased.baseRevision == 3)
        #expect(rebased.plans.map { $0.state?.version } == [3, 2, 4])
        let records = store.commit(rebased)
        #expect(records.map { $0?.clock.revision } == [4, 5, 6])
        #expect(records[0]?.conflict == Conflict(path: [try untyped("9")], origin: .file))
        #expect(records[1]?.conflict == nil)
        #expect(records[2]?.conflict == nil)
        // The file holds the batch's content, as planned before the app's write.
        #expect(store.scene(main)?.path == [try untyped("0"), try untyped("1"), try untyped("2")])
        #expect(store.scene(main)?.version == 4)
        #expect(store.fileDigest(main) == SceneStore.digest(utf8("[0,1,2]")))
    }

    @Test("a no-op ahead of its scene's first change becomes a change once an app's write is merged before it")
    func rebasedNoOpAheadOfAChange() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8("[0]"))
        var batch = store.makeBatch()
        // A `set` of the path the scene has, then a real change of it, then a no-op after that change.
        let same = try store.plan(
            .set(path: [try untyped("0")], format: nil), on: main, origin: clientOrigin, in: &batch)
        #expect(same.isNoOp)
        try store.plan(.push([try untyped("1")]), on: main, origin: clientOrigin, in: &batch)
        try store.plan(
            .set(path: [try untyped("0"), try untyped("1")], format: nil), on: main, origin: clientOrigin, in: &batch)
        #expect(batch.revisionsForRebase == 1, "the leading no-op may take a revision")
        guard case .changed(let app) = store.applyFile(main, bytes: utf8("[9]")) else {
            Issue.record("the app's write is a change")
            return
        }
        let rebased = store.rebase(batch, after: [main: app])
        #expect(rebased.plans.map(\.isNoOp) == [false, false, true])
        let records = store.commit(rebased)
        // The client's `set` of [0] now overwrites the app's [9], recorded as its conflict, at a revision of its own.
        #expect(records.map { $0?.clock.revision } == [3, 4, nil])
        #expect(records[0]?.path == [try untyped("0")])
        #expect(records[0]?.version == 3)
        #expect(records[0]?.conflict == Conflict(path: [try untyped("9")], origin: .file))
        #expect(records[1]?.conflict == nil)
        #expect(rebased.plans[2].state?.version == 4, "the trailing no-op names the change before it")
        #expect(store.scene(main)?.path == [try untyped("0"), try untyped("1")])
        #expect(store.fileDigest(main) == SceneStore.digest(utf8("[0,1]")))
    }

    @Test("a scene the app removed in the window is created again by the batch, at version 1")
    func rebasedAfterADisplacedRemoval() throws {
        var store = SceneStore(epoch: "e1")
        _ = store.applyFile(main, bytes: utf8("[0]"))
        var batch = store.makeBatch()
        try store.plan(.push([try untyped("1")]), on: main, origin: clientOrigin, in: &batch)
        guard case .changed(let removal) = store.applyFile(main, bytes: nil) else {
            Issue.record("the app's removal is a change")
            return
        }
        let records = store.commit(store.rebase(batch, after: [main: removal]))
        #expect(records.first??.version == 1)
        #expect(records.first??.conflict == nil)
        #expect(store.scene(main)?.created == 3)
        #expect(store.scene(main)?.version == 1)
    }

    @Test("a failed scene leaves out exactly its changes; the others get consecutive revisions")
    func failedScene() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("0")], format: nil), on: other)
        var batch = store.makeBatch()
        try store.plan(.set(path: [try untyped("1")], format: nil), on: main, origin: clientOrigin, in: &batch)
        try store.plan(.push([try untyped("9")]), on: other, origin: clientOrigin, in: &batch)
        try store.plan(.push([try untyped("2")]), on: main, origin: clientOrigin, in: &batch)
        #expect(batch.touchedScenes == [main, other])

        let records = store.commit(batch, except: [other])
        #expect(records.map { $0?.clock.revision } == [2, nil, 3])
        #expect(store.revision == 3)
        #expect(store.scene(other)?.depth == 1)
        #expect(store.scene(main)?.depth == 2)
    }

    @Test("a refused change leaves the batch as it was, and later changes still see the earlier ones")
    func refused() throws {
        var store = SceneStore(epoch: "e1")
        var batch = store.makeBatch()
        try store.plan(.set(path: [try untyped("1")], format: nil), on: main, origin: clientOrigin, in: &batch)
        let error = storeError {
            try store.plan(
                .push([try untyped("2")]), on: main, ifVersion: 5, origin: clientOrigin, in: &batch)
        }
        #expect(error?.code == .conflict)
        #expect(batch.plans.count == 1)
        try store.plan(
            .push([try untyped("2")]), on: main, ifVersion: 1, origin: clientOrigin, in: &batch)
        #expect(store.commit(batch).compactMap { $0?.version } == [1, 2])
    }

    @Test("a delete then a set in one batch: the file ends with the set, and the versions restart")
    func deleteThenSet() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        var batch = store.makeBatch()
        try store.plan(.delete, on: main, origin: clientOrigin, in: &batch)
        let missing = storeError { try store.plan(.pop(count: 1), on: main, origin: clientOrigin, in: &batch) }
        #expect(missing?.code == .notFound)
        try store.plan(.set(path: [try untyped("7")], format: nil), on: main, origin: clientOrigin, in: &batch)
        #expect(batch.finalFiles.first?.bytes.map(text) == "[7]")
        let records = store.commit(batch)
        #expect(records.compactMap { $0?.kind } == [.delete, .set])
        #expect(store.scene(main)?.version == 1)
    }

    @Test("a scene whose changes end where they began is still written; a batch of no-ops writes nothing")
    func noOps() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        var batch = store.makeBatch()
        let same = try store.plan(
            .set(path: [try untyped("1")], format: nil), on: main, origin: clientOrigin, in: &batch)
        #expect(same.isNoOp)
        #expect(batch.finalFiles.isEmpty)
        #expect(store.commit(batch) == [nil])
        #expect(store.revision == 1)
    }
}
