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
