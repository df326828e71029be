import Testing

@testable import SceneSyncCore

@Suite struct SceneStoreReplicaTests {
    let remote = Origin(source: .remote, client: "app", uid: 1000, pid: 7, host: "kitchen")

    @Test func aRemoteChangeKeepsTheOriginHostsBytesAndOrigin() throws {
        var store = SceneStore(epoch: "e")
        let id = try sceneID("s")
        let bytes = utf8("[ 1, 2.0 ]")
        let plan = try store.planReplica(id, bytes: bytes, format: .array, origin: remote, conflict: nil)
        #expect(plan.fileBytes == bytes)
        let committed = store.commit(plan)
        let record = try #require(committed)
        #expect(record.origin == remote)
        #expect(record.version == 1)
        #expect(store.scene(id)?.fileBytes == bytes)
        // Applying the same bytes again is no change.
        #expect(try store.planReplica(id, bytes: bytes, format: .array, origin: remote, conflict: nil).isNoOp)
    }

    @Test func theSentFormatDecidesWhatAutoDetectionWouldGuess() throws {
        var store = SceneStore(epoch: "e")
        let id = try sceneID("s")
        // Under auto detection these bytes are a codable path; the origin host had them as an array path.
        let plan = try store.planReplica(
            id, bytes: utf8(#"["A.b","1"]"#), format: .array, origin: remote, conflict: nil)
        let committed = store.commit(plan)
        let record = try #require(committed)
        #expect(record.format == .array)
        #expect(record.path?.count == 2)
    }

    @Test func aRemoteDeletionAndItsConflict() throws {
        var store = SceneStore(epoch: "e")
        let id = try sceneID("s")
        try store.apply(.set(path: [try untyped("1")], format: nil), on: id)
        let conflict = Conflict(path: [try untyped("9")], origin: Origin(source: .remote, host: "hall"))
        let plan = try store.planReplica(id, bytes: nil, format: nil, origin: remote, conflict: conflict)
        let committed = store.commit(plan)
        let record = try #require(committed)
        #expect(record.kind == .delete)
        #expect(record.version == 2)
        #expect(record.conflict == conflict)
        #expect(store.scene(id) == nil)
        #expect(try store.planReplica(id, bytes: nil, format: nil, origin: remote, conflict: nil).isNoOp)
    }

    @Test func aBatchOfRemoteChangesBuildsOnItselfAndWritesEachSceneOnce() throws {
        var store = SceneStore(epoch: "e")
        let a = try sceneID("a")
        let b = try sceneID("b")
        try store.apply(.set(path: [try untyped("0")], format: nil), on: b)
        let start = store.revision
        var batch = store.makeBatch()
        try store.planReplica(a, bytes: utf8("[1]"), format: .array, origin: remote, conflict: nil, in: &batch)
        try store.planReplica(b, bytes: nil, format: nil, origin: remote, conflict: nil, in: &batch)
        try store.planReplica(a, bytes: utf8("[2]"), format: .array, origin: remote, conflict: nil, in: &batch)
        // The same state again, and a deletion of a scene the batch already deleted: no-ops on top of the batch.
        #expect(
            try store.planReplica(a, bytes: utf8("[2]"), format: .array, origin: remote, conflict: nil, in: &batch)
                .isNoOp)
        #expect(try store.planReplica(b, bytes: nil, format: nil, origin: remote, conflict: nil, in: &batch).isNoOp)
        // A refused change leaves the batch as it was.
        #expect(throws: SceneFileError.self) {
            try store.planReplica(a, bytes: utf8("{"), format: .array, origin: remote, conflict: nil, in: &batch)
        }
        #expect(batch.plans.count == 5)
        #expect(batch.finalFiles.map(\.scene) == [a, b])
        #expect(batch.finalFiles.map(\.bytes) == [utf8("[2]"), nil])

        let records = store.commit(batch).compactMap { $0 }
        #expect(records.map(\.scene) == [a, b, a])
        #expect(records.map(\.version) == [1, 2, 2])
        #expect(records.map(\.clock.revision) == [start + 1, start + 2, start + 3])
        #expect(records.allSatisfy { $0.origin == remote })
        #expect(store.scene(a)?.fileBytes == utf8("[2]"))
        #expect(store.scene(b) == nil)
    }

    @Test func theWireCarriesTheOriginHost() throws {
        var out: [UInt8] = []
        Wire.appendOrigin(remote, to: &out)
        #expect(text(out) == #"{"source":"remote","client":"app","uid":1000,"pid":7,"host":"kitchen"}"#)
        #expect(Wire.decodeOrigin(try parseJSON(out)) == remote)
    }
}
