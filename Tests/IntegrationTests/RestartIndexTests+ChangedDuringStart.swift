import Foundation
import SceneSyncCore
import Testing

/// The scene files are checked against the index while the snapshot is decoded, well before the merge: a file
/// changed after its check reaches the store through the watch, which runs from before the listing.
extension RestartIndexTests {
    @Test func aFileChangedAfterItsCheckAndBeforeTheMergeIsMerged() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot()
        defer { daemon.cleanup() }
        // The test hook holds the restore once the scan is logged, for as long as this file exists.
        let hold = daemon.state.appendingPathComponent(".scenesync-test-hold-restore")
        try Data().write(to: hold)

        // The log holds the first start's too.
        let line = "listed and checked the scenes directory"
        let earlier = daemon.stderrText.components(separatedBy: line).count
        try await daemon.takeSlot()
        try daemon.launch()
        let scanned = await eventually { daemon.stderrText.components(separatedBy: line).count > earlier }
        try #require(scanned, "the restore reached the hold: \(daemon.stderrText)")
        try Data("[3]".utf8).write(to: daemon.sceneFile("beta"))
        try FileManager.default.removeItem(at: hold)
        try await daemon.waitUntilReady()

        let client = try await daemon.connect()
        // Every file was as the index recorded it when it was checked: the change came after.
        #expect(try await client.testCounter("unchanged_at_start") == Int64(SnapshotRestoreTests.files.count))
        _ = try await client.sync()
        let beta = try await client.scene("beta")
        let previous = try #require(before["beta"])
        #expect(beta["path"] == (try json(#"[{"value":3}]"#)), "\(beta.text)")
        #expect(beta["version"]?.uint64Value == (previous["version"]?.uint64Value ?? 0) + 1)
    }
}
