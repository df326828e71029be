import Foundation
import SceneSyncCore
import Testing

/// Snapshots (§5) and what a restart makes of them: the triggers, the file's shape, graceful shutdown, epoch
/// continuity, the start-up merge with the scenes directory, pruning, fallback past a torn snapshot, and a failed
/// write that leaves the old snapshots alone.
@Suite struct SnapshotRestoreTests {
    static let files = [
        "alpha": SceneFileTests.codableFile,
        "beta": "[\n  {\"b\" : 1},\n  2\n]\n",
        "gamma": " \t[]\r\n",
    ]

    /// A daemon with `files` merged, and a client.
    static func start(config: String? = nil) async throws -> (DaemonProcess, SocketClient) {
        let daemon = try DaemonProcess(config: config)
        for (id, content) in files { try Data(content.utf8).write(to: daemon.sceneFile(id)) }
        try await daemon.start()
        return (daemon, try await daemon.connect())
    }

    /// Checks a snapshot file against §5 and the scene files as they are now.
    static func expectSnapshot(
        _ daemon: DaemonProcess, path: String, revision: UInt64, reason: String, epoch: String
    ) async throws {
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        #expect(url.deletingLastPathComponent().path == daemon.state.appendingPathComponent("snapshots").path)
        #expect(name.wholeMatch(of: /snapshot-[0-9]{20}\.json/) != nil, "\(name)")
        #expect(UInt64(name.dropFirst(9).prefix(20)) == revision)
        let snapshot = try daemon.snapshot(name)
        #expect(snapshot["format"]?.stringValue == "scenesync.snapshot/1")
        #expect(snapshot["epoch"]?.stringValue == epoch)
        #expect(snapshot.revision == revision)
        #expect(snapshot["reason"]?.stringValue == reason)
        let time = try #require(snapshot["time"]?.stringValue)
        #expect(
            time.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z/) != nil, "\(time)")
        let scenes = try #require(snapshot["scenes"]?.arrayValue)
        let ids = scenes.compactMap { $0["scene"]?.stringValue }
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: daemon.scenes.path)
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.map { String($0.dropLast(5)) }
        #expect(ids == onDisk.sorted(), "scenes sorted by ID, one per scene file")
        let client = try await daemon.connect()
        for scene in scenes {
            let id = try #require(scene["scene"]?.stringValue)
            let bytes = try #require(daemon.sceneBytes(id))
            #expect(scene["content"] == (try JSONParser.parse(bytes)), "\(id): content is the file's")
            let wire = try await client.scene(id)
            for key in ["version", "created", "modified", "format"] { #expect(scene[key] == wire[key], "\(id) \(key)") }
        }
    }

    @Test func sigusr1WritesASignalSnapshot() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("push", ["scene": J.string("gamma"), "elements": #"[{"value":{"x":[1]}}]"#])
        let clock = try await client.clock()
        try await client.subscribe(["nothing-matches"])
        _ = try await client.events(until: "synced")
        #expect(daemon.snapshotFiles().isEmpty)

        daemon.signal(SIGUSR1)
        let event = try #require(try await client.events(until: "snapshot").last)
        #expect(event["reason"]?.stringValue == "signal")
        #expect(event.revision == clock.revision)
        let path = try #require(event["path"]?.stringValue)
        try await Self.expectSnapshot(
            daemon, path: path, revision: clock.revision, reason: "signal", epoch: clock.epoch)
        #expect(daemon.snapshotFiles().count == 1)

        let stats = try await client.ok("stats")
        #expect(stats["snapshots"]?.uint64Value == 1)
        #expect(stats["last_snapshot"]?["path"]?.stringValue == path)
        #expect(stats["last_snapshot"]?["reason"]?.stringValue == "signal")
        #expect(stats["last_snapshot"]?.revision == clock.revision)
    }

    @Test func snapshotRequestAnswersWithTheFile() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        #expect(try await client.ok("stats")["last_snapshot"] == .null)
        let watcher = try await daemon.connect()
        try await watcher.subscribe()
        _ = try await watcher.events(until: "synced")
        let clock = try await client.clock()

        let response = try await client.ok("snapshot")
        let path = try #require(response["path"]?.stringValue)
        #expect(path.hasPrefix("/"))
        #expect(response.revision == clock.revision)
        #expect(response["scenes"]?.uint64Value == 3)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(response["bytes"]?.uint64Value == size.map(UInt64.init))
        try await Self.expectSnapshot(
            daemon, path: path, revision: clock.revision, reason: "request", epoch: clock.epoch)

        let event = try #require(try await watcher.events(until: "snapshot").last)
        #expect(event["path"]?.stringValue == path)
        #expect(event["reason"]?.stringValue == "request")
    }

    @Test func backgroundPhaseAnswersWithTheSnapshot() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let clock = try await client.clock()
        let active = try await client.ok("phase", ["scene": J.string("alpha"), "phase": J.string("active")])
        #expect(active["snapshot"] == nil)
        #expect(daemon.snapshotFiles().isEmpty)

        let response = try await client.ok("phase", ["scene": J.string("alpha"), "phase": J.string("background")])
        let snapshot = try #require(response["snapshot"])
        let path = try #require(snapshot["path"]?.stringValue)
        #expect(snapshot.revision == clock.revision)
        #expect(snapshot["scenes"]?.uint64Value == 3)
        #expect(snapshot["bytes"]?.uint64Value ?? 0 > 0)
        try await Self.expectSnapshot(daemon, path: path, revision: clock.revision, reason: "phase", epoch: clock.epoch)
    }

    @Test func sigtermShutsDownGracefully() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("pop", ["scene": J.string("beta")])
        let clock = try await client.clock()
        let subscriber = try await daemon.connect()
        try await subscriber.subscribe()
        _ = try await subscriber.events(until: "synced")
        let notify = try #require(daemon.notify)

        #expect(try await daemon.stop(SIGTERM) == 0)
        for connection in [client, subscriber] {
            let events = try await connection.events(until: "shutdown")
            #expect(events.named("shutdown").count == 1)
            #expect(events.last?["subscription"] == nil)
            #expect(await connection.isClosedByPeer())
        }
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed")
        #expect(notify.messages.contains { $0.contains("STOPPING=1") })
        let newest = try #require(daemon.snapshotFiles().last)
        let snapshot = try daemon.snapshot(newest)
        #expect(snapshot["reason"]?.stringValue == "shutdown")
        #expect(snapshot.revision == clock.revision)
        #expect(snapshot["epoch"]?.stringValue == clock.epoch)
    }

    @Test func restartAfterCleanShutdownKeepsEpochAndRevision() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("push", ["scene": J.string("alpha"), "elements": #"[{"type":"Swift.Int","value":1}]"#])
        let clock = try await client.clock()
        let alpha = try await client.scene("alpha")
        #expect(try await daemon.stop() == 0)

        try await daemon.start()
        let again = try await daemon.connect()
        let restarted = try await again.clock()
        #expect(restarted.epoch == clock.epoch)
        #expect(restarted.revision == clock.revision)
        #expect(try await again.scene("alpha").sceneMembers == alpha.sceneMembers)
        #expect(try await again.ok("history", ["scene": J.string("alpha")])["records"] == .array([]))
        // History starts at the restored revision: resuming from before it is compacted, from it is fine.
        try await again.subscribe(since: (clock.epoch, clock.revision - 1))
        #expect(try await again.events(until: "synced").first?["reason"]?.stringValue == "compacted")
        try await again.subscribe(since: clock)
        #expect(try await again.events(until: "synced").map(\.eventName) == ["synced"])
    }

    @Test func crashStartsANewEpochAndNeverReusesRevisions() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("snapshot")
        for n in 1...3 { try await client.ok("set", ["scene": J.string("gamma"), "path": "[{\"value\":\(n)}]"]) }
        let clock = try await client.clock()
        _ = try await daemon.stop(SIGKILL)

        try await daemon.start()
        let again = try await daemon.connect()
        let restarted = try await again.clock()
        #expect(restarted.epoch != clock.epoch)
        #expect(restarted.revision >= clock.revision)
        let next = try await again.ok("set", ["scene": J.string("gamma"), "path": "[]"])
        #expect(try #require(next.revision) > clock.revision)
        #expect(try await again.scene("beta")["path"] == (try json(#"[{"value":{"b":1}},{"value":2}]"#)))
        // A clock from before the crash cannot be resumed.
        try await again.subscribe(since: clock)
        let resync = try await again.events(until: "synced")
        #expect(resync.first?.eventName == "resync")
        #expect(resync.first?["reason"]?.stringValue == "epoch")
    }

    @Test func missingFilesAreWrittenBackWithoutARevision() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        var scenes: [[String: JSONValue]] = []
        for id in Self.files.keys { scenes.append(try await client.scene(id).sceneMembers) }
        let clock = try await client.clock()
        #expect(try await daemon.stop() == 0)
        for id in Self.files.keys { try FileManager.default.removeItem(at: daemon.sceneFile(id)) }

        try await daemon.start()
        for (id, content) in Self.files {
            #expect(daemon.readScene(id) == content, "\(id) comes back byte for byte")
        }
        let again = try await daemon.connect()
        #expect(try await again.clock() == clock)
        var restored: [[String: JSONValue]] = []
        for id in Self.files.keys { restored.append(try await again.scene(id).sceneMembers) }
        #expect(restored == scenes)
        for id in Self.files.keys {
            #expect(try await again.ok("history", ["scene": J.string(id)])["records"] == .array([]))
        }
        // The restored files are not read back as changes either.
        #expect(try await again.sync() == clock.revision)
    }

    @Test func missingFileDeletesTheSceneWithoutRestoreMissing() async throws {
        let (daemon, client) = try await Self.start(config: "scenes: {restore_missing: false}\n")
        defer { daemon.cleanup() }
        let clock = try await client.clock()
        #expect(try await daemon.stop() == 0)
        try FileManager.default.removeItem(at: daemon.sceneFile("beta"))

        try await daemon.start()
        #expect(daemon.readScene("beta") == nil)
        let again = try await daemon.connect()
        #expect(try await again.request("get", ["scene": J.string("beta")]).errorCode == "not_found")
        #expect(try await again.clock() == (clock.epoch, clock.revision + 1))
        let records = try #require(try await again.ok("history", ["scene": J.string("beta")])["records"]?.arrayValue)
        #expect(records.count == 1)
        #expect(records.first?["kind"]?.stringValue == "delete")
        #expect(records.first?["origin"]?["source"]?.stringValue == "file")
    }

    @Test func filesChangedWhileDownAreMergedAtStart() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let clock = try await client.clock()
        let created = try await client.scene("alpha")["created"]
        #expect(try await daemon.stop() == 0)
        try daemon.writeScene("alpha", #"["Swift.Int","1"]"#)
        try daemon.writeScene("delta", "[4]")

        try await daemon.start()
        let again = try await daemon.connect()
        #expect(try await again.clock() == (clock.epoch, clock.revision + 2))
        let alpha = try await again.scene("alpha")
        #expect(alpha["version"]?.uint64Value == 2)
        #expect(alpha["created"] == created)
        #expect(alpha["path"] == (try json(#"[{"type":"Swift.Int","value":1}]"#)))
        #expect(try await again.scene("delta")["version"]?.uint64Value == 1)
        let records = try #require(try await again.ok("history", ["scene": J.string("alpha")])["records"]?.arrayValue)
        #expect(records.map { $0["origin"]?["source"]?.stringValue } == ["file"])
        #expect(daemon.readScene("alpha") == #"["Swift.Int","1"]"#)
    }

    @Test func onlyTheNewestSnapshotsAreKept() async throws {
        let (daemon, client) = try await Self.start(config: "snapshots: {keep: 2}\n")
        defer { daemon.cleanup() }
        var written: [String] = []
        for n in 1...4 {
            try await client.ok("set", ["scene": J.string("gamma"), "path": "[{\"value\":\(n)}]"])
            let path = try #require(try await client.ok("snapshot")["path"]?.stringValue)
            written.append(URL(fileURLWithPath: path).lastPathComponent)
        }
        #expect(Set(written).count == 4)
        #expect(daemon.snapshotFiles() == Array(written.suffix(2)))
    }

    /// A torn newest snapshot: the start falls back to the older one, which loses continuity (a new epoch); the
    /// scene files then bring the state forward as ordinary changes.
    @Test func tornNewestSnapshotFallsBackToTheOlderOne() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("snapshot")
        try await client.ok("set", ["scene": J.string("gamma"), "path": #"[{"value":"newer"}]"#])
        let clock = try await client.clock()
        #expect(try await daemon.stop() == 0)
        let names = daemon.snapshotFiles()
        try #require(names.count == 2)
        let newest = daemon.state.appendingPathComponent("snapshots/\(names[1])")
        let bytes = try Data(contentsOf: newest)
        try bytes.prefix(bytes.count / 2).write(to: newest)

        try await daemon.start()
        let again = try await daemon.connect()
        let restarted = try await again.clock()
        #expect(restarted.epoch != clock.epoch)
        #expect(restarted.revision > clock.revision)
        // Restored from the older snapshot (gamma at version 1), then merged from its file: one change.
        let gamma = try await again.scene("gamma")
        #expect(gamma["version"]?.uint64Value == 2)
        #expect(gamma["path"] == (try json(#"[{"value":"newer"}]"#)))
        let records = try #require(try await again.ok("history", ["scene": J.string("gamma")])["records"]?.arrayValue)
        #expect(records.map { $0["origin"]?["source"]?.stringValue } == ["file"])
        #expect(try await again.scene("alpha")["version"]?.uint64Value == 1)
        #expect(await daemon.logs(names[1]), "the log names the unreadable snapshot")
    }

    @Test func failedSnapshotLeavesTheOldOnesAlone() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("snapshot")
        try await client.ok("set", ["scene": J.string("gamma"), "path": "[]", "format": J.string("codable")])
        let directory = daemon.state.appendingPathComponent("snapshots")
        let moved = daemon.state.appendingPathComponent("snapshots.moved")
        let before = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        let contents = try before.map { try Data(contentsOf: directory.appendingPathComponent($0)) }
        try FileManager.default.moveItem(at: directory, to: moved)
        try Data("not a directory".utf8).write(to: directory)
        let watcher = try await daemon.connect()
        try await watcher.subscribe(["nothing-matches"])
        _ = try await watcher.events(until: "synced")

        let failed = try await client.request("snapshot")
        #expect(failed.errorCode == "unavailable")
        let warning = try #require(try await watcher.events(until: "warning").last)
        #expect(warning["code"]?.stringValue == "snapshot_failed")
        #expect(try await client.ok("stats")["snapshots"]?.uint64Value == 1)
        let phase = try await client.request("phase", ["scene": J.string("alpha"), "phase": J.string("background")])
        #expect(phase.errorCode == "unavailable")

        try FileManager.default.removeItem(at: directory)
        try FileManager.default.moveItem(at: moved, to: directory)
        let after = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(after == before)
        #expect(try after.map { try Data(contentsOf: directory.appendingPathComponent($0)) } == contents)
        #expect(try await client.request("snapshot").isOK)
    }
}
