import Testing

@testable import SceneSyncCore

/// A record at `revision` for `scene`.
func record(_ revision: UInt64, _ scene: SceneID, kind: ChangeRecord.Kind = .set) -> ChangeRecord {
    ChangeRecord(
        clock: Clock(epoch: "e", revision: revision), scene: scene, kind: kind, version: revision, format: .array,
        path: kind == .set ? [] : nil, origin: .file)
}

@Suite("ChangeHistory")
struct ChangeHistoryTests {
    let a: SceneID
    let b: SceneID

    init() throws {
        a = try sceneID("a")
        b = try sceneID("b")
    }

    @Test("the ring keeps the newest records, oldest first", arguments: [1, 2, 3, 7])
    func ring(_ limit: Int) {
        var history = ChangeHistory(limit: limit, startingAt: 0)
        #expect(history.count == 0)
        #expect(history.newestRevision == 0)
        for revision in 1...20 as ClosedRange<UInt64> {
            history.append(record(revision, a))
            let kept = min(Int(revision), limit)
            #expect(history.count == kept)
            #expect(history.records.map(\.clock.revision) == Array((revision - UInt64(kept) + 1)...revision))
            #expect(history.newestRevision == revision)
            #expect(history.baseline == revision - UInt64(kept))
        }
    }

    @Test("changes(after:) returns every later record, or nil when some were compacted")
    func changesAfter() {
        var history = ChangeHistory(limit: 4, startingAt: 10)
        #expect(history.changes(after: 10)?.isEmpty == true)
        #expect(history.changes(after: 9) == nil)
        #expect(history.changes(after: 11) == nil)
        for revision in 11...16 as ClosedRange<UInt64> { history.append(record(revision, a)) }
        // Retained: 13...16; baseline 12.
        #expect(history.baseline == 12)
        #expect(history.changes(after: 11) == nil)
        #expect(history.changes(after: 12)?.map(\.clock.revision) == [13, 14, 15, 16])
        #expect(history.changes(after: 14)?.map(\.clock.revision) == [15, 16])
        #expect(history.changes(after: 15)?.map(\.clock.revision) == [16])
        #expect(history.changes(after: 16)?.isEmpty == true)
        #expect(history.changes(after: 17) == nil)
        #expect(history.changes(after: 0) == nil)
        #expect(history.changes(after: .max) == nil)
    }

    @Test("changes(after:) handles gaps between revisions")
    func gaps() {
        var history = ChangeHistory(limit: 10, startingAt: 0)
        for revision in [2, 5, 9, 20] as [UInt64] { history.append(record(revision, a)) }
        #expect(history.changes(after: 0)?.map(\.clock.revision) == [2, 5, 9, 20])
        #expect(history.changes(after: 1)?.map(\.clock.revision) == [2, 5, 9, 20])
        #expect(history.changes(after: 4)?.map(\.clock.revision) == [5, 9, 20])
        #expect(history.changes(after: 5)?.map(\.clock.revision) == [9, 20])
        #expect(history.changes(after: 19)?.map(\.clock.revision) == [20])
        #expect(history.changes(after: 20)?.isEmpty == true)
    }

    @Test("a zero limit keeps nothing but still tracks the baseline")
    func zeroLimit() {
        var history = ChangeHistory(limit: 0, startingAt: 3)
        history.append(record(4, a))
        history.append(record(5, a))
        #expect(history.count == 0)
        #expect(history.records.isEmpty)
        #expect(history.baseline == 5)
        #expect(history.changes(after: 5)?.isEmpty == true)
        #expect(history.changes(after: 4) == nil)
        #expect(history.records(for: a).isEmpty)
        #expect(ChangeHistory(limit: -5, startingAt: 0).limit == 0)
    }

    @Test("records(for:limit:) returns a scene's records, newest first")
    func recordsForScene() {
        var history = ChangeHistory(limit: 5, startingAt: 0)
        for revision in 1...8 as ClosedRange<UInt64> { history.append(record(revision, revision % 2 == 0 ? a : b)) }
        // Retained: 4...8.
        #expect(history.records(for: a).map(\.clock.revision) == [8, 6, 4])
        #expect(history.records(for: b).map(\.clock.revision) == [7, 5])
        #expect(history.records(for: a, limit: 2).map(\.clock.revision) == [8, 6])
        #expect(history.records(for: a, limit: 0).isEmpty)
        #expect(history.records(for: b, limit: 10).map(\.clock.revision) == [7, 5])
        #expect(ChangeHistory(limit: 5, startingAt: 0).records(for: a).isEmpty)
    }
}

@Suite("SceneStore history")
struct SceneStoreHistoryTests {
    let main: SceneID

    init() throws {
        main = try sceneID("main")
    }

    @Test("history is bounded to historyLimit")
    func bounded() throws {
        var store = SceneStore(epoch: "e1", historyLimit: 5)
        for value in 1...12 { try store.apply(.push([try untyped("\(value)")]), on: main) }
        #expect(store.history.count == 5)
        #expect(store.history.records.map(\.clock.revision) == [8, 9, 10, 11, 12])
        #expect(store.history.records.map(\.version) == [8, 9, 10, 11, 12])
        #expect(store.history.changes(after: 7)?.count == 5)
        #expect(store.history.changes(after: 6) == nil)
        #expect(store.history.records(for: main, limit: 2).map(\.clock.revision) == [12, 11])
    }

    @Test("history starts empty at the restored revision")
    func restartBaseline() throws {
        var store = SceneStore(epoch: "e2", revision: 50)
        #expect(store.history.changes(after: 50)?.isEmpty == true)
        #expect(store.history.changes(after: 49) == nil)
        #expect(store.history.changes(after: 0) == nil)
        let created = try store.apply(.push([try untyped("1")]), on: main)
        let createdRecord = try #require(created)
        #expect(store.history.changes(after: 50) == [createdRecord])
        #expect(store.history.changes(after: 49) == nil)
    }

    @Test("advanceRevision moves the revision forward and starts history afresh")
    func advance() throws {
        var store = SceneStore(epoch: "e1")
        try store.apply(.push([try untyped("1")]), on: main)
        store.advanceRevision(to: 100)
        #expect(store.revision == 100)
        #expect(store.clock == Clock(epoch: "e1", revision: 100))
        #expect(store.history.count == 0)
        #expect(store.history.changes(after: 100)?.isEmpty == true)
        #expect(store.history.changes(after: 1) == nil)
        let record = try store.apply(.push([try untyped("2")]), on: main)
        #expect(record?.clock.revision == 101)
        #expect(store.scene(main)?.modified == 101)
        // Never backwards, and not at the same revision.
        store.advanceRevision(to: 50)
        store.advanceRevision(to: 101)
        #expect(store.revision == 101)
        #expect(store.history.count == 1)
    }

    @Test("resizeHistory keeps what fits")
    func resize() throws {
        var store = SceneStore(epoch: "e1", historyLimit: 10)
        for value in 1...8 { try store.apply(.push([try untyped("\(value)")]), on: main) }
        store.resizeHistory(limit: 3)
        #expect(store.history.limit == 3)
        #expect(store.history.records.map(\.clock.revision) == [6, 7, 8])
        #expect(store.history.changes(after: 5)?.count == 3)
        #expect(store.history.changes(after: 4) == nil)
        store.resizeHistory(limit: 20)
        #expect(store.history.records.map(\.clock.revision) == [6, 7, 8])
        try store.apply(.push([try untyped("9")]), on: main)
        #expect(store.history.records.map(\.clock.revision) == [6, 7, 8, 9])
        store.resizeHistory(limit: 20)
        #expect(store.history.count == 4)
    }
}

/// History keeps `history.max_revisions` records (10,000 by default): a record stays small, and its path is the
/// scene state's own packed elements, not a copy.
@Suite struct ChangeRecordSizeTests {
    @Test func aRecordIsSmallAndSharesItsStatesElements() throws {
        #expect(MemoryLayout<ChangeRecord>.stride <= 72)
        var store = SceneStore(epoch: "e")
        let path = [Element(tag: nil, value: .string("one")), Element(tag: nil, value: .string("two"))]
        let scene = try #require(SceneID("s"))
        let plan = try store.plan(
            .set(path: path, format: .array), on: scene, origin: Origin(source: .client, client: "test"))
        let committed = store.commit(plan)
        let record = try #require(committed)
        let state = try #require(store.scene(scene))
        let elements = try #require(record.elements)
        #expect(elements === state.elements)
        #expect(record.origin == Origin(source: .client, client: "test"))
        #expect(record.path == path)
    }
}
