import Testing

@testable import SceneSyncCore

/// A snapshot's scene entries carry `phase` only when one was reported, and a restore brings it back (§5).
@Suite("Snapshot: phases")
struct SnapshotPhaseTests {
    /// Every fixture scene, each with a phase of its own or none.
    static func snapshot() throws -> Snapshot {
        let phases: [ScenePhase?] = [nil, .active, .inactive, .background]
        var scenes = try SnapshotTests.scenes()
        for index in scenes.indices { scenes[index].phase = phases[index % phases.count] }
        return Snapshot(epoch: "e", revision: 99, time: "2026-11-28T10:00:00Z", reason: .phase, scenes: scenes)
    }

    @Test("encode then decode gives back every scene's phase, and scenes without one have none")
    func roundTrip() throws {
        let snapshot = try Self.snapshot()
        let decoded = try Snapshot.decode(snapshot.encode())
        let sorted = snapshot.scenes.sorted { $0.id < $1.id }
        #expect(decoded.scenes.map(\.phase) == sorted.map(\.phase))
        #expect(Set(decoded.scenes.map(\.phase)).count == 4)
        #expect(decoded.scenes == sorted)
        // The content is still the file's, byte for byte, with the phase beside it.
        for (restored, original) in zip(decoded.scenes, sorted) {
            #expect(restored.fileBytes == original.fileBytes, "\(original.id)")
        }
        #expect(decoded.encode() == snapshot.encode())
    }

    @Test("the phase member is present only when there is a phase, and holds its name")
    func shape() throws {
        let snapshot = try Self.snapshot()
        let json = try parseJSON(snapshot.encode())
        let entries = try #require(json["scenes"]?.arrayValue)
        let sorted = snapshot.scenes.sorted { $0.id < $1.id }
        #expect(entries.count == sorted.count)
        for (entry, scene) in zip(entries, sorted) {
            if let phase = scene.phase {
                #expect(
                    entry.objectValue?.keys
                        == ["scene", "version", "created", "modified", "format", "phase", "content"])
                #expect(entry["phase"] == .string(phase.rawValue))
            } else {
                #expect(entry.objectValue?.keys == ["scene", "version", "created", "modified", "format", "content"])
            }
        }
    }

    @Test("a snapshot without any phase is byte for byte what it was before phases were kept")
    func withoutPhases() throws {
        let snapshot = try SnapshotTests.snapshot()
        let bytes = snapshot.encode()
        #expect(!String(decoding: bytes, as: UTF8.self).contains(#""phase""#))
        #expect(try Snapshot.decode(bytes).scenes.allSatisfy { $0.phase == nil })
    }

    @Test("a phase this version does not know, or one that is no string, is dropped and the scene kept")
    func unknownPhase() throws {
        let document = """
            {"format":"scenesync.snapshot/1","epoch":"e","revision":3,"time":"2026-11-28T10:00:00Z","reason":"signal",\
            "scenes":[
            {"scene":"a","version":1,"created":1,"modified":1,"format":"array","phase":"hidden","content":[1]},
            {"scene":"b","version":1,"created":2,"modified":2,"format":"array","phase":7,"content":[2]},
            {"scene":"c","version":1,"created":3,"modified":3,"format":"array","content":[3],"phase":"inactive"}
            ]}
            """
        let decoded = try Snapshot.decode(utf8(document))
        #expect(decoded.scenes.map(\.id.rawValue) == ["a", "b", "c"])
        #expect(decoded.scenes.map(\.phase) == [nil, nil, .inactive])
        #expect(decoded.scenes.map { String(decoding: $0.fileBytes, as: UTF8.self) } == ["[1]", "[2]", "[3]"])
    }

    @Test("a store restored from a snapshot has the snapshot's phases")
    func restore() throws {
        let snapshot = try Snapshot.decode(try Self.snapshot().encode())
        var store = SceneStore(epoch: snapshot.epoch, revision: snapshot.revision)
        for scene in snapshot.scenes { store.restore(scene) }
        #expect(store.scenes.map(\.phase) == snapshot.scenes.map(\.phase))
        #expect(store.scenes.contains { $0.phase == .background })
    }
}
