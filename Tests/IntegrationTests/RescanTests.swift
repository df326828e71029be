import Foundation
import SceneSyncCore
import Testing

/// The rescan after an inotify queue overflow (§6 warning `rescanned`), injected through the test hook
/// `.scenesync-test-overflow` (`SCENESYNC_TEST_HOOKS=1`).
@Suite struct RescanTests {
    /// Changes the watcher cannot see, made through hard links: `link()` into the watched directory is only an
    /// `IN_CREATE` (the daemon waits for a close or rename), and a write through a link in another directory is
    /// reported for that directory only. A real overflow loses events just like that; the rescan must find these
    /// changes by content and leave every other scene alone.
    @Test func rescanMergesWhatTheWatcherMissedAndNothingElse() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let outside = daemon.root.appending("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        for id in ["a", "b", "c"] { try daemon.writeScene(id, "[\"\(id)\"]") }
        let client = try await daemon.connect()
        try await client.subscribe()
        let before = try await client.sync()
        let listed = try await client.ok("list")
        _ = client.takeEvents()

        // a: rewritten in place through a second link outside the watched directory.
        let alias = outside.appendingPathComponent("a-alias")
        try #require(link(daemon.sceneFile("a").path, alias.path) == 0)
        let fd = open(alias.path, O_WRONLY | O_TRUNC)
        try #require(fd >= 0)
        #expect(write(fd, "[\"a2\"]", 6) == 6)
        close(fd)
        // d: a new scene file that appears by link().
        let hidden = outside.appendingPathComponent("d")
        try Data("[\"d\"]".utf8).write(to: hidden)
        try #require(link(hidden.path, daemon.sceneFile("d").path) == 0)

        // The premise: the watcher really did not see either.
        #expect(try await client.sync() == before)
        #expect(try await client.scene("a")["path"] == (try json(#"[{"value":"a"}]"#)))
        #expect(try await client.request("get", ["scene": J.string("d")]).errorCode == "not_found")
        #expect(client.takeEvents().isEmpty)

        try await daemon.dropHook(".scenesync-test-overflow")
        let after = try await client.sync()
        let events = client.takeEvents()
        let warnings = events.named("warning")
        #expect(warnings.count == 1)
        #expect(warnings.first?["code"]?.stringValue == "rescanned")
        #expect(warnings.first?["scene"] == nil)
        let changes = events.named("change")
        #expect(Set(changes.compactMap { $0["scene"]?.stringValue }) == ["a", "d"])
        #expect(after == before + 2)

        #expect(try await client.scene("a")["path"] == (try json(#"[{"value":"a2"}]"#)))
        #expect(try await client.scene("a")["version"]?.uint64Value == 2)
        #expect(try await client.scene("d")["version"]?.uint64Value == 1)
        let relisted = try #require(try await client.ok("list")["scenes"]?.arrayValue)
        for id in ["b", "c"] {
            let old = listed["scenes"]?.arrayValue?.first { $0["scene"]?.stringValue == id }
            let new = relisted.first { $0["scene"]?.stringValue == id }
            #expect(old != nil && old == new, "\(id) changed in the rescan")
        }
        #expect(
            !FileManager.default.fileExists(
                atPath: daemon.scenes.appendingPathComponent(".scenesync-test-overflow").path))
    }

    /// A rescan whose listing of the directory fails (EMFILE, played by the test hook `.scenesync-test-fail-listing`
    /// in the state directory) is not dropped: it is logged, retried at each housekeeping tick, and done once the
    /// directory can be listed again, with the `rescanned` warning.
    @Test func aRescanThatCannotListTheDirectoryIsRetriedUntilItWorks() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.subscribe()
        _ = try await client.sync()
        _ = client.takeEvents()
        // A scene the watcher cannot see (it appears by link()): only a rescan finds it.
        let outside = daemon.root.appending("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        let hidden = outside.appendingPathComponent("d")
        try Data("[\"d\"]".utf8).write(to: hidden)
        try #require(link(hidden.path, daemon.sceneFile("d").path) == 0)

        let failListing = daemon.state.appendingPathComponent(".scenesync-test-fail-listing")
        try Data().write(to: failListing)
        try await daemon.dropHook(".scenesync-test-overflow")
        // Retried, and logged once: the failure is seen twice before the directory can be listed again.
        let other = try await daemon.connect()
        #expect(try await eventually(timeout: .seconds(30)) { try await other.testCounter("rescan_failures") >= 2 })
        // A sync asked meanwhile waits for the rescan: changes made before it may be among the lost events.
        let failures = try await other.testCounter("rescan_failures")
        let sync = try await client.send("sync")
        #expect(
            try await eventually(timeout: .seconds(30)) { try await other.testCounter("rescan_failures") > failures })
        #expect(try await other.request("get", ["scene": J.string("d")]).errorCode == "not_found")

        try FileManager.default.removeItem(at: failListing)
        let answer = try await client.response(to: sync, "sync")
        // Answered once the rescan merged what the overflow lost, not before.
        #expect(answer["revision"]?.uint64Value == (try await other.clock()).revision, "\(answer.text)")
        let warnings = client.takeEvents().named("warning")
        #expect(warnings.last?["code"]?.stringValue == "rescanned", "\(warnings.map(\.text))")
        #expect(try await client.scene("d")["path"] == (try json(#"[{"value":"d"}]"#)))
        #expect(daemon.stderrText.components(separatedBy: "cannot list the scenes directory").count == 2)
    }

    /// A removed or rescanned directory of many scenes is read and merged a chunk at a time on the I/O queue, so
    /// the engine answers requests in between instead of after the last file. The directory is moved away (one
    /// event, none per file) with `restore_missing` off, so the daemon merges one deletion per scene. The test hook
    /// `.scenesync-test-hold-bulk` holds the step after its first chunk: a `stats` must then be answered with
    /// some scenes deleted and some left, which a blocked engine could not do. `SCENESYNC_RESCAN_FILES` sets the
    /// number of scenes (`make check-long` runs 20,000).
    @Test func requestsAreAnsweredWhileThousandsOfFilesAreMerged() async throws {
        let daemon = try DaemonProcess(config: "scenes:\n  restore_missing: false\n")
        defer { daemon.cleanup() }
        let count = Int64(ProcessInfo.processInfo.environment["SCENESYNC_RESCAN_FILES"].flatMap(Int.init) ?? 3_000)
        try #require(count > 1_024, "the step must have more than one chunk of 1,024 files")
        try FileManager.default.createDirectory(at: daemon.scenes, withIntermediateDirectories: true)
        for index in 0..<count {
            try Data("[\(index)]".utf8).write(to: daemon.scenes.appendingPathComponent("s\(index).json"))
        }
        try await daemon.start(timeout: .seconds(120))
        let client = try await daemon.connect()
        client.timeout = .seconds(120)
        #expect(try await client.ok("stats")["scenes"]?.int64Value == count)

        let hold = daemon.state.appendingPathComponent(".scenesync-test-hold-bulk")
        try Data().write(to: hold)
        try FileManager.default.moveItem(at: daemon.scenes, to: daemon.root.appending("moved-away"))
        var middle: Int64? = nil
        let held = try await eventually(timeout: .seconds(120)) {
            let scenes = try #require(try await client.ok("stats")["scenes"]?.int64Value)
            if scenes > 0, scenes < count { middle = scenes }
            return middle != nil
        }
        #expect(held, "no answer while the step was held after its first chunk")
        #expect(middle == count - 1_024, "the held step merged more than its first chunk")
        try FileManager.default.removeItem(at: hold)
        let finished = try await eventually(timeout: .seconds(120)) {
            try await client.ok("stats")["scenes"]?.int64Value == 0
        }
        #expect(finished, "not every scene was deleted")
    }

    /// The scenes directory removed while running: the daemon recreates it, watches it again, and a `sync` asked
    /// for right after the recreation still answers. Its cookie may be made before the new watch exists, so only
    /// the rescan that follows the new watch can answer it; the window is short, hence the repetitions.
    @Test func removedScenesDirectoryIsRecreatedAndSyncStillAnswers() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.subscribe()
        _ = try await client.events(until: "synced")
        client.timeout = .seconds(10)
        for round in 1...20 {
            try daemon.writeScene("a", "[\(round)]")
            try await client.sync()
            try FileManager.default.removeItem(at: daemon.scenes)
            let events = try await client.events(until: "warning")
            #expect(events.last?["code"]?.stringValue == "rescanned", "round \(round)")
            #expect(FileManager.default.fileExists(atPath: daemon.scenes.path), "round \(round): not recreated")
            do {
                try await client.sync()
            } catch SocketClient.ClientError.timeout(_) {
                Issue.record("round \(round): sync after the recreation never answered")
                return
            }
            _ = client.takeEvents()
        }
        // Watched again: a new file is merged.
        try daemon.writeScene("after", "[1]")
        try await client.sync()
        #expect(try await client.scene("after")["version"]?.uint64Value == 1)
        let cookies = try FileManager.default.contentsOfDirectory(atPath: daemon.scenes.path)
            .filter { $0.hasPrefix(".scenesync-") }
        #expect(cookies.isEmpty, "sync cookies left behind: \(cookies)")
    }
}
