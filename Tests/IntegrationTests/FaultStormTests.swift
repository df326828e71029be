import Foundation
import SceneSyncCore
import Testing

/// SIGTERM in the middle of a write storm, round after round (§4, §6): subscribers resume across the restarts with
/// `since`, and everything they saw is checked like etcd's robustness suite checks watches.
@Suite struct FaultStormTests {
    static let scenes = (0..<6).map { "storm\($0)" }

    @Test func sigtermDuringAWriteStormKeepsEveryWatchConsistent() async throws {
        var random = SeededRandom(seed: Fault.seed)
        let rounds = Fault.rounds(8)
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        var validator = WatchValidator()
        var clocks: [(epoch: String, revision: UInt64)?] = [nil, nil]
        var epochs: [String] = []
        var firstNumber = 0
        var resumerRounds = 0

        for round in 0..<rounds {
            let context = "round \(round), seed \(Fault.seed)"
            let epoch = try await daemon.connect().clock().epoch
            epochs.append(epoch)
            var subscribers: [RecordingSubscriber] = []
            for index in clocks.indices {
                subscribers.append(try await RecordingSubscriber.start(daemon, name: "s\(index)", since: clocks[index]))
            }
            let writer = SceneWriter(directory: daemon.scenes.path, scenes: Self.scenes, firstNumber: firstNumber)
            // The storm's length, which paces nothing the test waits for; halfway, a third subscriber resumes
            // from a clock the first one was just given.
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...250, using: &random)))
            if let clock = subscribers[0].lastClock {
                subscribers.append(try await RecordingSubscriber.start(daemon, name: "resumer", since: clock))
                resumerRounds += 1
            }
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...250, using: &random)))

            let termination = try await daemon.stopped(SIGTERM)
            let writes = try await writer.stop()
            firstNumber += writes.count + 1
            #expect(termination == .exited(0), "\(context): \(termination)\n\(daemon.stderrText.suffix(2000))")

            for subscriber in subscribers {
                let events = try await subscriber.finish()
                validator.check(
                    "\(context) \(subscriber.name)", since: subscriber.since, epoch: subscriber.epoch, events)
            }
            for index in clocks.indices { clocks[index] = subscribers[index].lastClock ?? clocks[index] }

            // The final snapshot holds the last revision any client was told of.
            let newest = try #require(daemon.snapshotFiles().last, "\(context): no final snapshot")
            let snapshot = try daemon.snapshot(newest)
            #expect(snapshot["reason"]?.stringValue == "shutdown", "\(context): \(newest)")
            let seen = validator.highest[epoch] ?? 0
            #expect(
                (snapshot.revision ?? 0) >= seen,
                "\(context): final snapshot at r\(snapshot.revision ?? 0), but a subscriber got r\(seen)")

            try await daemon.start()
        }
        validator.recordIssues()
        // The claim about a subscriber resuming mid-storm holds only if one did.
        #expect(resumerRounds >= 1, "no round had a clock to resume from (seed \(Fault.seed))")

        // A clean shutdown keeps the epoch, so every round ran in one epoch.
        let client = try await daemon.connect()
        let final = try await client.clock()
        #expect(Set(epochs + [final.epoch]).count == 1, "epochs: \(epochs + [final.epoch])")
        // After the storms: every scene's state is its file.
        try await client.sync()
        for scene in Self.scenes {
            let bytes = try #require(daemon.sceneBytes(scene))
            #expect(try await client.scene(scene)["path"] == Fault.wirePath(ofArrayFile: bytes), "\(scene)")
        }
    }
}
