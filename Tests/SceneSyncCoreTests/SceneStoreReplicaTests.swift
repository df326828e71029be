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

    @Test func theWireCarriesTheOriginHost() throws {
        var out: [UInt8] = []
        Wire.appendOrigin(remote, to: &out)
        #expect(text(out) == #"{"source":"remote","client":"app","uid":1000,"pid":7,"host":"kitchen"}"#)
        #expect(Wire.decodeOrigin(try parseJSON(out)) == remote)
    }
}
