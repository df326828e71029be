import SceneSyncCore
import Testing

@testable import SceneSyncDaemon

/// The temp names the daemon reserves for itself (§5): only those are removed at start.
@Suite struct TempNameTests {
    @Test func theDaemonsOwnSceneTempNamesAreRecognised() throws {
        let scene = try #require(SceneID(fileName: "main.json"))
        #expect(EngineCore.isOwnTempName(EngineCore.tempName(scene)))
        #expect(EngineCore.isOwnTempName(".a.b-c_d.json.123.tmp"))
    }

    @Test(arguments: [
        ".main.json.tmp", ".main.json.12a.tmp", "main.json.12.tmp", ".main.json.12.tmpx", ".main.json..tmp",
        ".-bad.json.12.tmp", ".scenesync-sync-1", ".main.tmp", "notes.txt", ".main.json.12.tmp~",
    ])
    func otherNamesAreLeftAlone(_ name: String) {
        #expect(!EngineCore.isOwnTempName(name))
    }

    @Test func snapshotTempNames() {
        #expect(StateDirectory.isSnapshotTempName(".snapshot-4711.tmp"))
        #expect(!StateDirectory.isSnapshotTempName(".snapshot-.tmp"))
        #expect(!StateDirectory.isSnapshotTempName("snapshot-00000000000000000001.json"))
        #expect(!StateDirectory.isSnapshotTempName(".snapshot-12x.tmp"))
    }
}
