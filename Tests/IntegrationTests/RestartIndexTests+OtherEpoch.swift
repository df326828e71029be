import Foundation
import SceneSyncCore
import Testing

/// The scene files are checked against the index while the snapshot is decoded, before the restore has decided the
/// epoch: the check is of the snapshot the clean-shutdown marker names. A restore that cannot keep that epoch does
/// not use the check, and reads every file, as it always did after an unclean start.
extension RestartIndexTests {
    /// The log line of a check that was made and not used.
    static let checkNotUsed = "the scene files were checked against an index of another state"

    @Test func aCheckOfTheMarkedSnapshotIsNotUsedWhenTheRevisionMarkIsLost() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot()
        defer { daemon.cleanup() }
        #expect(FileManager.default.fileExists(atPath: daemon.state.appendingPathComponent("scene-files.index").path))
        // The snapshot, the marker and the index still agree; without the high-water mark the restore cannot prove
        // continuity and starts a new epoch from the same snapshot.
        try FileManager.default.removeItem(at: daemon.state.appendingPathComponent("revision"))

        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.testCounter("unchanged_at_start") == 0)
        #expect(await daemon.logs(Self.checkNotUsed), "the files were checked, and the check not used")
        for (id, scene) in before { #expect(try await client.scene(id).sceneMembers == scene.sceneMembers) }
    }

    @Test func aCheckOfTheMarkedSnapshotIsNotUsedWhenThatSnapshotCannotBeRead() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot()
        defer { daemon.cleanup() }
        #expect(FileManager.default.fileExists(atPath: daemon.state.appendingPathComponent("scene-files.index").path))
        let snapshots = daemon.state.appendingPathComponent("snapshots")
        for name in daemon.snapshotFiles() {
            try Data("not a snapshot".utf8).write(to: snapshots.appendingPathComponent(name))
        }

        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.testCounter("unchanged_at_start") == 0)
        #expect(await daemon.logs(Self.checkNotUsed), "the files were checked, and the check not used")
        // Nothing was restored: every scene is its file's, read again.
        for (id, scene) in before {
            let restarted = try await client.scene(id)
            #expect(restarted["path"] == scene["path"], "\(id): \(restarted.text)")
        }
    }
}
