import Foundation
import SceneSyncCore
import Testing

/// Snapshot triggers that pile up on one write (§5: at most one more), and snapshots on a full disk, the final one
/// at shutdown included.
@Suite struct SnapshotTriggerTests {
    /// The test hook `.scenesync-test-hold-snapshot` holds the first write while ten more triggers arrive (requests,
    /// background phases and a SIGUSR1), as the daemon's own trigger count reports: they make exactly one more
    /// snapshot, and every one of them is answered by it.
    @Test func triggersDuringOneWriteMakeOneMoreSnapshot() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        let observer = try await daemon.connect()
        let written = try await observer.stat("snapshots")
        let triggers = try await observer.testCounter("snapshot_triggers")
        let hold = daemon.state.appendingPathComponent(".scenesync-test-hold-snapshot")
        try Data().write(to: hold)

        let first = try await client.send("snapshot")
        try await observer.waitForTestCounter("snapshot_triggers", above: triggers)
        var others: [(SocketClient, Int)] = []
        for index in 0..<9 {
            let connection = try await daemon.connect()
            let id =
                index % 3 == 0
                ? try await connection.send("phase", ["scene": J.string("alpha"), "phase": J.string("background")])
                : try await connection.send("snapshot")
            others.append((connection, id))
        }
        daemon.signal(SIGUSR1)
        try await observer.waitForTestCounter("snapshot_triggers", above: triggers + 10)
        try FileManager.default.removeItem(at: hold)

        #expect(try await client.response(to: first).isOK)
        for (connection, id) in others {
            let response = try await connection.response(to: id)
            #expect(response.isOK, "\(response.text)")
        }
        #expect(try await observer.stat("snapshots") == written + 2, "ten triggers during one write made one more")
    }

    /// A full state directory: a snapshot request fails with `unavailable` and the `snapshot_failed` warning, the
    /// snapshots already there are untouched, and a shutdown whose final snapshot fails still exits cleanly. The
    /// next start, with space again, restores the older snapshot in a new epoch and never goes back in revisions.
    @Test func snapshotsOnAFullDiskFailLoudlyAndKeepTheOldOnes() async throws {
        try TestEnvironment.requireRoot("mounting a small tmpfs needs root")
        let daemon = try DaemonProcess()
        var mounts = FaultDiskFullTests.Mounts()
        do {
            try await mounts.mount(daemon.state, size: "256k")
            try await fullDisk(daemon)
        } catch {
            Issue.record(error)
        }
        _ = try? await daemon.stopped(SIGKILL)  // already stopped, or failed: either way it must not outlive the test
        await mounts.unmount()
        daemon.cleanup()
    }

    private func fullDisk(_ daemon: DaemonProcess) async throws {
        for index in 0..<8 {
            try daemon.writeScene("s\(index)", "[\"\(String(repeating: "x", count: 2_000))\"]")
        }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.ok("snapshot")
        let directory = daemon.state.appendingPathComponent("snapshots")
        let names = daemon.snapshotFiles()
        let contents = try names.map { try Data(contentsOf: directory.appendingPathComponent($0)) }
        try await client.ok("set", ["scene": J.string("s0"), "path": #"[{"value":"changed"}]"#])
        let clock = try await client.clock()
        let watcher = try await daemon.connect()
        try await watcher.subscribe(["nothing-matches"])
        _ = try await watcher.events(until: "synced")

        let filler = try FaultDiskFullTests.fill(daemon.state)
        let failed = try await client.request("snapshot")
        #expect(failed.errorCode == "unavailable", "\(failed.text)")
        let warning = try #require(try await watcher.events(until: "warning").last)
        #expect(warning["code"]?.stringValue == "snapshot_failed")
        #expect(daemon.snapshotFiles() == names)

        #expect(try await daemon.stop() == 0, "a failed final snapshot is logged, not a failed shutdown")
        #expect(await daemon.logs("final snapshot failed"))
        #expect(daemon.snapshotFiles() == names)
        #expect(try names.map { try Data(contentsOf: directory.appendingPathComponent($0)) } == contents)

        try FileManager.default.removeItem(atPath: filler)
        try await daemon.start()
        let again = try await daemon.connect()
        let restarted = try await again.clock()
        #expect(restarted.epoch != clock.epoch, "without its final snapshot the shutdown proved nothing")
        #expect(restarted.revision >= clock.revision)
        // The change after the older snapshot is still in its file, and merged back from it.
        #expect(try await again.scene("s0")["path"] == (try json(#"[{"value":"changed"}]"#)))
    }

    /// An app that saves its scene file and at once signals the background phase finds that save in the snapshot
    /// (§5), whichever trigger it uses: 200 saves, each followed at once by `phase background`, then by `snapshot`,
    /// then by SIGUSR1, each snapshot holding the save just before it. Without the merge before the snapshot, the
    /// watcher's events could still be unread when the trigger arrived.
    @Test func aSaveRightBeforeATriggerIsInItsSnapshot() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("s", "[0]")
        try await daemon.start()
        let client = try await daemon.connect()

        func content(ofSceneIn path: String) throws -> JSONValue? {
            let snapshot = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            return snapshot["scenes"]?.arrayValue?.first { $0["scene"]?.stringValue == "s" }?["content"]
        }
        var save = 0
        // Subscribed only now, so that the `snapshot` events it reads are those of its own SIGUSR1 rounds.
        var watcher: SocketClient? = nil
        for trigger in ["phase", "snapshot", "SIGUSR1"] {
            if trigger == "SIGUSR1" {
                let connection = try await daemon.connect()
                try await connection.subscribe(["nothing-matches"])
                _ = try await connection.events(until: "synced")
                watcher = connection
            }
            for _ in 0..<200 {
                save += 1
                try daemon.writeScene("s", "[\(save)]")
                let path: String
                switch trigger {
                case "phase":
                    let answer = try await client.ok(
                        "phase", ["scene": J.string("s"), "phase": J.string("background")])
                    path = try #require(answer["snapshot"]?["path"]?.stringValue)
                case "snapshot":
                    path = try #require(try await client.ok("snapshot")["path"]?.stringValue)
                default:
                    daemon.signal(SIGUSR1)
                    let event = try #require(try await watcher?.events(until: "snapshot").last)
                    path = try #require(event["path"]?.stringValue)
                }
                let found = try content(ofSceneIn: path)
                try #require(
                    found == (try json("[\(save)]")), "\(trigger): save \(save) missing, found \(found?.text ?? "-")")
            }
        }
    }
}
