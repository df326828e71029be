import Testing

@testable import SceneSyncCore

/// A scene keeps its last reported phase across every kind of change, forgets it when deleted, and reporting one is
/// never a change (§6).
@Suite("SceneStore: phases")
struct SceneStorePhaseTests {
    let main: SceneID
    let other: SceneID

    init() throws {
        main = try sceneID("main")
        other = try sceneID("other")
    }

    /// A store holding `main` at `[1]` (revision 1) with `phase` reported.
    func storeWithMain(phase: ScenePhase) throws -> SceneStore {
        var store = SceneStore(epoch: "e1")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        let kept = store.recordPhase(phase, of: main)
        #expect(kept)
        return store
    }

    @Test("reporting a phase is kept, and is no change: no revision, no version, no history record")
    func notAChange() throws {
        var store = try storeWithMain(phase: .active)
        #expect(store.scene(main)?.phase == .active)
        #expect(store.revision == 1)
        #expect(store.scene(main)?.version == 1)
        #expect(store.scene(main)?.modified == 1)
        #expect(store.history.records.count == 1)
        // The last report wins.
        let kept = store.recordPhase(.background, of: main)
        #expect(kept)
        #expect(store.scene(main)?.phase == .background)
        #expect(store.revision == 1)
        #expect(store.history.records.count == 1)
    }

    @Test("a scene that does not exist keeps no phase, and a scene created later starts without one")
    func missingScene() throws {
        var store = try storeWithMain(phase: .active)
        let kept = store.recordPhase(.inactive, of: other)
        #expect(!kept)
        #expect(store.scene(other) == nil)
        #expect(store.revision == 1)
        try store.apply(.set(path: [try untyped("2")], format: nil), on: other)
        #expect(store.scene(other)?.phase == nil)
        // The other scene's phase is its own.
        #expect(store.scene(main)?.phase == .active)
    }

    @Test("client changes (set, push, pop, pop to root) keep the phase")
    func clientChangesKeepIt() throws {
        var store = try storeWithMain(phase: .inactive)
        try store.apply(.set(path: [try untyped("1"), try untyped("2")], format: nil), on: main)
        #expect(store.scene(main)?.phase == .inactive)
        try store.apply(.push([try untyped("3")]), on: main)
        #expect(store.scene(main)?.phase == .inactive)
        try store.apply(.pop(count: 1), on: main)
        #expect(store.scene(main)?.phase == .inactive)
        try store.apply(.popToRoot, on: main)
        #expect(store.scene(main)?.version == 5)
        #expect(store.scene(main)?.phase == .inactive)
    }

    @Test("a conflict's current scene shows the phase")
    func conflictCurrent() throws {
        var store = try storeWithMain(phase: .background)
        let error = storeError {
            try store.apply(.push([try untyped("2")]), on: main, ifVersion: 7)
        }
        #expect(error?.code == .conflict)
        #expect(error?.current?.phase == .background)
    }

    @Test("a file change, a same-path file write and a remote change keep the phase")
    func otherChangesKeepIt() throws {
        var store = try storeWithMain(phase: .active)
        #expect(store.applyFile(main, bytes: utf8("[1,2]")).record?.version == 2)
        #expect(store.scene(main)?.phase == .active)
        // The same path in other bytes: not a change, the layout is taken, the phase stays.
        #expect(store.applyFile(main, bytes: utf8("[ 1, 2 ]")) == .unchanged)
        #expect(store.scene(main)?.phase == .active)
        let remote = Origin(source: .remote, host: "b")
        store.commit(try store.planReplica(main, bytes: utf8("[3]"), format: .array, origin: remote, conflict: nil))
        #expect(store.scene(main)?.version == 3)
        #expect(store.scene(main)?.phase == .active)
    }

    @Test("a phase reported after a change was planned, before it was committed, is kept by the commit")
    func reportedBetweenPlanAndCommit() throws {
        var store = try storeWithMain(phase: .active)
        let plan = try store.plan(.push([try untyped("2")]), on: main, origin: clientOrigin)
        #expect(plan.state?.phase == .active)
        // The engine writes the file between plan and commit; a report may be served meanwhile.
        store.recordPhase(.background, of: main)
        store.commit(plan)
        #expect(store.scene(main)?.version == 2)
        #expect(store.scene(main)?.phase == .background)
    }

    @Test("a batch keeps the phase; deleted and created again in one batch, the scene has none")
    func batches() throws {
        var store = try storeWithMain(phase: .inactive)
        var batch = store.makeBatch()
        try store.plan(.push([try untyped("2")]), on: main, origin: clientOrigin, in: &batch)
        _ = store.commit(batch)
        #expect(store.scene(main)?.phase == .inactive)

        batch = store.makeBatch()
        try store.plan(.delete, on: main, origin: clientOrigin, in: &batch)
        let created = try store.plan(
            .set(path: [try untyped("9")], format: nil), on: main, origin: clientOrigin, in: &batch)
        #expect(created.state?.phase == nil)
        _ = store.commit(batch)
        #expect(store.scene(main)?.version == 1)
        #expect(store.scene(main)?.phase == nil)
    }

    @Test("a deletion forgets the phase, whatever its source")
    func deletionForgets() throws {
        // By a client.
        var store = try storeWithMain(phase: .background)
        try store.apply(.delete, on: main)
        try store.apply(.set(path: [try untyped("1")], format: nil), on: main)
        #expect(store.scene(main)?.phase == nil)

        // By the file's removal, then the file written again.
        store = try storeWithMain(phase: .background)
        #expect(store.applyFile(main, bytes: nil).record?.kind == .delete)
        #expect(store.applyFile(main, bytes: utf8("[1]")).record?.version == 1)
        #expect(store.scene(main)?.phase == nil)

        // By another host.
        store = try storeWithMain(phase: .background)
        let remote = Origin(source: .remote, host: "b")
        store.commit(try store.planReplica(main, bytes: nil, format: nil, origin: remote, conflict: nil))
        store.commit(try store.planReplica(main, bytes: utf8("[1]"), format: .array, origin: remote, conflict: nil))
        #expect(store.scene(main)?.version == 1)
        #expect(store.scene(main)?.phase == nil)
    }

    @Test("a restored scene keeps the phase it was restored with, through an unchanged and a changed file")
    func restore() throws {
        var store = SceneStore(epoch: "e2", revision: 5)
        store.restore(
            SceneState(
                id: main, version: 2, created: 1, modified: 5, format: .array, path: [try untyped("1")],
                phase: .inactive))
        #expect(store.scene(main)?.phase == .inactive)
        store.noteFileHoldsState(main, digest: SceneStore.digest(utf8("[1]")))
        #expect(store.applyFile(main, bytes: utf8("[1]")) == .unchanged)
        #expect(store.scene(main)?.phase == .inactive)
        #expect(store.applyFile(main, bytes: utf8("[1,2]")).record?.version == 3)
        #expect(store.scene(main)?.phase == .inactive)
    }

    @Test("two states that differ only in their phase are not equal")
    func equality() throws {
        let state = SceneState(id: main, version: 1, created: 1, modified: 1, format: .array, path: [])
        var reported = state
        reported.phase = .active
        #expect(state != reported)
        reported.phase = nil
        #expect(state == reported)
    }
}
