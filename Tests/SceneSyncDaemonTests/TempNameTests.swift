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

    /// The watcher's check, on the kernel's bytes: this process's temp names only, not another daemon's.
    @Test func theWatcherRecognisesOnlyThisProcesssTempNames() throws {
        let scene = try #require(SceneID(fileName: "a.b-c_d.json"))
        let own = EngineCore.tempName(scene)
        #expect(own == ".a.b-c_d.json.\(EngineCore.ownPID).tmp")
        #expect(Self.isThisProcess(own))
        let otherPID = EngineCore.ownPID == 1 ? 2 : EngineCore.ownPID - 1
        for name in [
            ".a.json.\(otherPID).tmp", "a.json.\(EngineCore.ownPID).tmp", ".json.\(EngineCore.ownPID).tmp",
            "..json.\(EngineCore.ownPID).tmp", ".-a.json.\(EngineCore.ownPID).tmp",
            ".a.json.\(EngineCore.ownPID).tmpx", ".a.json.\(EngineCore.ownPID)0.tmp", "",
        ] {
            #expect(!Self.isThisProcess(name), "\(name)")
        }
    }

    private static func isThisProcess(_ name: String) -> Bool {
        Array(name.utf8).withUnsafeBytes(EngineCore.isThisProcessTempName)
    }

    @Test func snapshotTempNames() {
        #expect(StateDirectory.isSnapshotTempName(".snapshot-4711.tmp"))
        #expect(!StateDirectory.isSnapshotTempName(".snapshot-.tmp"))
        #expect(!StateDirectory.isSnapshotTempName("snapshot-00000000000000000001.json"))
        #expect(!StateDirectory.isSnapshotTempName(".snapshot-12x.tmp"))
    }
}
