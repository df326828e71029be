import Foundation
import SceneSyncCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A start after a snapshot does not read again the scene files that are still exactly as the snapshot's index
/// recorded them, and reads every other one: the outcome of §5's start-up merge stays exact.
@Suite struct RestartIndexTests {
    /// A daemon with `SnapshotRestoreTests.files`, stopped after a snapshot that recorded all of them: each file's
    /// last change is more than the index's margin (a second) before the snapshot's settled moment. `phases` are
    /// reported first (scene to phase).
    static func stoppedAfterAnIndexedSnapshot(
        phases: [String: String] = [:]
    ) async throws -> (DaemonProcess, [String: JSONValue]) {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        for (scene, phase) in phases { try await client.reportPhase(phase, of: scene) }
        var before: [String: JSONValue] = [:]
        for id in SnapshotRestoreTests.files.keys { before[id] = try await client.scene(id) }
        // The index trusts a file only when its last change is a second older than the moment everything was
        // merged; the files were written just now, so the clock must pass that second first (a wait on the clock,
        // which is what the rule is about, not on the daemon).
        let newest =
            try SnapshotRestoreTests.files.keys.map { try Self.lastChange(daemon.sceneFile($0).path) }.max() ?? 0
        while Self.now() <= newest + 1_200_000_000 {
            try await Task.sleep(for: .milliseconds(50))  // a wait for the clock to pass a known instant
        }
        // A snapshot takes the engine's settled moment now, and the final snapshot's index keeps it.
        try await client.ok("snapshot")
        #expect(try await daemon.stop() == 0)
        return (daemon, before)
    }

    @Test func filesUnchangedSinceTheSnapshotAreNotReadAgain() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot()
        defer { daemon.cleanup() }
        #expect(FileManager.default.fileExists(atPath: daemon.state.appendingPathComponent("scene-files.index").path))

        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.testCounter("unchanged_at_start") == Int64(SnapshotRestoreTests.files.count))
        for (id, scene) in before { #expect(try await client.scene(id).sceneMembers == scene.sceneMembers) }
        // What the store knows of an unread file is exact: an app's next write is a change with no conflict.
        try await client.subscribe(["beta"])
        _ = try await client.events(until: "synced")
        try Data("[3]".utf8).write(to: daemon.sceneFile("beta"))
        let change = try #require(try await client.events(until: "change").last)
        #expect(change["origin"]?["source"]?.stringValue == "file")
        #expect(change["conflict"] == nil, "\(change.text)")
    }

    @Test func phasesComeBackWithScenesWhoseFilesAreNotReadAgain() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot(
            phases: ["alpha": "inactive", "beta": "background"])
        defer { daemon.cleanup() }
        #expect(before["alpha"]?["phase"]?.stringValue == "inactive")

        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.testCounter("unchanged_at_start") == Int64(SnapshotRestoreTests.files.count))
        for (id, scene) in before { #expect(try await client.scene(id).sceneMembers == scene.sceneMembers) }
        #expect(try await client.scene("alpha")["phase"]?.stringValue == "inactive")
        #expect(try await client.scene("beta")["phase"]?.stringValue == "background")
        let gamma = try await client.scene("gamma")
        #expect(gamma["phase"] == nil, "\(gamma.text)")
    }

    @Test func aFileRewrittenInPlaceWhileStoppedIsMergedEvenWithItsSizeAndTimeKept() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot()
        defer { daemon.cleanup() }
        // Same inode, same size, the modification time put back: only the status-change time shows the write.
        let path = daemon.sceneFile("gamma").path
        let original = try #require(daemon.sceneBytes("gamma"))
        var info = stat()
        try #require(lstat(path, &info) == 0)
        let replacement = Array(" \t[1]\n".utf8)
        try #require(replacement.count == original.count)
        let fd = open(path, O_WRONLY)
        try #require(fd >= 0)
        #expect(pwrite(fd, replacement, replacement.count, 0) == replacement.count)
        close(fd)
        var times = [info.st_atim, info.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)

        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.testCounter("unchanged_at_start") == Int64(SnapshotRestoreTests.files.count - 1))
        let gamma = try await client.scene("gamma")
        let previous = try #require(before["gamma"])
        #expect(gamma["path"] != previous["path"], "the write is merged: \(gamma.text)")
        #expect(gamma["version"]?.uint64Value == (previous["version"]?.uint64Value ?? 0) + 1)
    }

    @Test func aDamagedIndexIsIgnoredAndEveryFileRead() async throws {
        let (daemon, before) = try await Self.stoppedAfterAnIndexedSnapshot()
        defer { daemon.cleanup() }
        let index = daemon.state.appendingPathComponent("scene-files.index")
        var bytes = try Array(Data(contentsOf: index))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: index)

        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.testCounter("unchanged_at_start") == 0)
        for (id, scene) in before { #expect(try await client.scene(id).sceneMembers == scene.sceneMembers) }
    }

    /// The file's last change (modification or status change), in nanoseconds since the epoch.
    static func lastChange(_ path: String) throws -> Int64 {
        var info = stat()
        try #require(lstat(path, &info) == 0)
        let changed = Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec)
        let modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        return max(changed, modified)
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
