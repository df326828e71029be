import Foundation
import SceneSyncCore
import Testing

/// A scene's last reported phase (§5, §6) against the real daemon: shown wherever the scene is, never a change, kept
/// through the scene's changes and through restarts as the snapshots hold it, forgotten by a deletion.
@Suite struct ScenePhaseTests {
    @Test func aReportedPhaseIsShownButIsNoChange() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        let subscriber = try await daemon.connect()
        try await subscriber.subscribe(["alpha"])
        _ = try await subscriber.events(until: "synced")
        let before = try await client.scene("alpha")
        #expect(before["phase"] == nil, "no phase before one is reported: \(before.text)")
        let records = try await client.ok("history", ["scene": J.string("alpha")])["records"]

        let answer = try await client.reportPhase("active", of: "alpha")
        #expect(answer["snapshot"] == nil)
        let after = try await client.scene("alpha")
        #expect(after["phase"]?.stringValue == "active", "\(after.text)")
        for key in ["version", "created", "modified", "path", "revision"] {
            #expect(after[key] == before[key], "\(key) of \(after.text)")
        }
        #expect(try await client.ok("history", ["scene": J.string("alpha")])["records"] == records)
        // The subscriber hears of the report as a `phase` event, and of no change.
        try await subscriber.sync()
        let events = subscriber.takeEvents()
        #expect(events.named("change").isEmpty, "\(events.map(\.text))")
        #expect(events.named("phase").map { $0["phase"]?.stringValue } == ["active"])

        // The last report wins, and a `state` event shows it, while a scene without one has none.
        try await client.reportPhase("inactive", of: "alpha")
        try await subscriber.subscribe(["alpha", "beta"])
        let states = try await subscriber.events(until: "synced").named("state")
        let alpha = try #require(states.first { $0["scene"]?.stringValue == "alpha" }, "\(states.map(\.text))")
        let beta = try #require(states.first { $0["scene"]?.stringValue == "beta" }, "\(states.map(\.text))")
        #expect(alpha["phase"]?.stringValue == "inactive", "\(alpha.text)")
        #expect(beta["phase"] == nil, "\(beta.text)")
        #expect(try await client.clock().revision == before.revision)
    }

    @Test func changesOfEveryKindKeepThePhase() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        try await client.reportPhase("inactive", of: "alpha")
        let version = try #require(try await client.scene("alpha")["version"]?.uint64Value)

        try await client.ok("set", ["scene": J.string("alpha"), "path": #"[{"type":"Swift.Int","value":1}]"#])
        try await client.ok("push", ["scene": J.string("alpha"), "elements": #"[{"type":"Swift.Int","value":2}]"#])
        try await client.ok("pop", ["scene": J.string("alpha")])
        var alpha = try await client.scene("alpha")
        #expect(alpha["version"]?.uint64Value == version + 3)
        #expect(alpha["phase"]?.stringValue == "inactive", "\(alpha.text)")

        // An app's write of the file.
        try daemon.writeScene("alpha", #"["Swift.Int","7"]"#)
        try await client.sync()
        alpha = try await client.scene("alpha")
        #expect(alpha["version"]?.uint64Value == version + 4)
        #expect(alpha["path"] == (try json(#"[{"type":"Swift.Int","value":7}]"#)))
        #expect(alpha["phase"]?.stringValue == "inactive", "\(alpha.text)")

        // A refused change shows the phase in the conflict's current scene.
        let refused = try await client.request(
            "push", ["scene": J.string("alpha"), "elements": #"[{"type":"Swift.Int","value":3}]"#, "if_version": "1"])
        #expect(refused.errorCode == "conflict")
        #expect(refused["error"]?["current"]?["phase"]?.stringValue == "inactive", "\(refused.text)")
    }

    @Test func aDeletionForgetsThePhase() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        try await client.reportPhase("active", of: "alpha")
        try await client.reportPhase("active", of: "beta")

        // Deleted by a client, then created again.
        try await client.ok("delete", ["scene": J.string("alpha")])
        try await client.ok("set", ["scene": J.string("alpha"), "path": "[]"])
        let alpha = try await client.scene("alpha")
        #expect(alpha["version"]?.uint64Value == 1)
        #expect(alpha["phase"] == nil, "\(alpha.text)")

        // Deleted by the file's removal, then written again by the app.
        try FileManager.default.removeItem(at: daemon.sceneFile("beta"))
        try await client.sync()
        #expect(try await client.request("get", ["scene": J.string("beta")]).errorCode == "not_found")
        try daemon.writeScene("beta", "[1]")
        try await client.sync()
        let beta = try await client.scene("beta")
        #expect(beta["version"]?.uint64Value == 1)
        #expect(beta["phase"] == nil, "\(beta.text)")
    }

    @Test func aPhaseForASceneThatDoesNotExistIsNotKept() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        let subscriber = try await daemon.connect()
        try await subscriber.subscribe(["later"])
        _ = try await subscriber.events(until: "synced")
        try await client.reportPhase("active", of: "later")
        // Passed on to the subscribers all the same.
        try await subscriber.sync()
        #expect(subscriber.takeEvents().named("phase").map { $0["scene"]?.stringValue } == ["later"])
        try await client.ok("set", ["scene": J.string("later"), "path": "[]"])
        let later = try await client.scene("later")
        #expect(later["phase"] == nil, "\(later.text)")
        // The same ID, reported again now that the scene exists, is kept.
        try await client.reportPhase("active", of: "later")
        #expect(try await client.scene("later")["phase"]?.stringValue == "active")
    }

    /// An app that saves a new scene's file and at once reports the background phase: the snapshot's merge creates
    /// the scene, and the phase, reported after the save, is the scene's. Several rounds, so that the report often
    /// arrives before the daemon has read the save.
    @Test func theBackgroundPhaseOfASceneJustSavedIsKept() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        for round in 0..<12 {
            let id = "saved-\(round)"
            try daemon.writeScene(id, "[\(round)]")
            let answer = try await client.reportPhase("background", of: id)
            let snapshot = try #require(answer["snapshot"]?["path"]?.stringValue)
            let scene = try await client.scene(id)
            #expect(scene["phase"]?.stringValue == "background", "round \(round): \(scene.text)")
            let entry = try Self.snapshotEntry(daemon, URL(fileURLWithPath: snapshot).lastPathComponent, id)
            #expect(entry?["phase"]?.stringValue == "background", "round \(round): \(entry?.text ?? "no entry")")
        }
    }

    @Test func aCleanRestartKeepsThePhases() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        try await client.reportPhase("inactive", of: "alpha")
        try await client.reportPhase("background", of: "beta")
        let clock = try await client.clock()
        #expect(try await daemon.stop() == 0)
        let final = try #require(daemon.snapshotFiles().last)
        #expect(try Self.snapshotEntry(daemon, final, "alpha")?["phase"]?.stringValue == "inactive")
        #expect(try Self.snapshotEntry(daemon, final, "beta")?["phase"]?.stringValue == "background")
        #expect(try Self.snapshotEntry(daemon, final, "gamma").map { $0["phase"] == nil } == true)

        try await daemon.start()
        let again = try await daemon.connect()
        #expect(try await again.clock() == clock)
        #expect(try await again.scene("alpha")["phase"]?.stringValue == "inactive")
        #expect(try await again.scene("beta")["phase"]?.stringValue == "background")
        let gamma = try await again.scene("gamma")
        #expect(gamma["phase"] == nil, "\(gamma.text)")
    }

    @Test func afterAKillThePhasesAreThoseOfTheLastSnapshot() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        try await client.reportPhase("active", of: "alpha")
        try await client.ok("snapshot")
        // Reported after the last snapshot: lost with the process.
        try await client.reportPhase("inactive", of: "alpha")
        try await client.reportPhase("active", of: "beta")
        #expect(try await client.scene("alpha")["phase"]?.stringValue == "inactive")
        _ = try await daemon.stop(SIGKILL)

        try await daemon.start()
        let again = try await daemon.connect()
        #expect(try await again.scene("alpha")["phase"]?.stringValue == "active")
        let beta = try await again.scene("beta")
        #expect(beta["phase"] == nil, "\(beta.text)")
    }

    @Test func aSceneDeletedByTheStartUpMergeForgetsItsPhase() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start(config: "scenes: {restore_missing: false}\n")
        defer { daemon.cleanup() }
        try await client.reportPhase("active", of: "beta")
        #expect(try await daemon.stop() == 0)
        try FileManager.default.removeItem(at: daemon.sceneFile("beta"))

        try await daemon.start()
        let again = try await daemon.connect()
        #expect(try await again.request("get", ["scene": J.string("beta")]).errorCode == "not_found")
        try await again.ok("set", ["scene": J.string("beta"), "path": "[]"])
        let beta = try await again.scene("beta")
        #expect(beta["version"]?.uint64Value == 1)
        #expect(beta["phase"] == nil, "\(beta.text)")
    }

    /// The entry of `scene` in the snapshot file `name`, nil when it holds none.
    static func snapshotEntry(_ daemon: DaemonProcess, _ name: String, _ scene: String) throws -> JSONValue? {
        try daemon.snapshot(name)["scenes"]?.arrayValue?.first { $0["scene"]?.stringValue == scene }
    }
}

extension SocketClient {
    /// The `phase` op, which must succeed; its answer.
    @discardableResult
    func reportPhase(_ phase: String, of scene: String) async throws -> JSONValue {
        try await ok("phase", ["scene": J.string(scene), "phase": J.string(phase)])
    }
}
