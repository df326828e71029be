import Foundation
import SceneSyncCore
import Testing

/// The cluster journal's writer runs after the engine's turn: a change to a shared scene is made and sent to
/// subscribers at once, and answered once its line is in the journal.
extension ClusterKillTests {
    /// While the writer's turn is held (the test hook `.scenesync-test-hold-journal-writer`), a change is made but
    /// not answered. A `SIGKILL` then takes its journal line, but not the change: the next start finds its scene
    /// file different from the last snapshot, records it again and pushes it, once.
    @Test func aChangeIsAnsweredOnlyOnceItsJournalLineIsWrittenAndALineAKillTookIsRecordedAgain() async throws {
        try await ClusterReplicationTests.withCluster(hosts: 2) { server, cluster, watchers in
            let a = cluster.hosts[0]
            let hold = a.state.appendingPathComponent(".scenesync-test-hold-journal-writer")
            try Data().write(to: hold)
            let writer = try await a.connect()
            let observer = try await a.connect()
            try await writer.send("set", ["scene": J.string("queued"), "path": #"[{"value":"kept"}]"#])
            #expect(try await eventually { try await observer.clusterStats()["pending"]?.int64Value == 1 })
            #expect(a.sceneBytes("queued") == Array(#"["kept"]"#.utf8), "the change is made before its answer")
            let journal = try String(contentsOf: a.state.appendingPathComponent("cluster-journal"), encoding: .utf8)
            #expect(!journal.contains(#""scene":"queued""#), "the line was written before the kill")
            #expect(
                try await writer.receivesNothing(within: .milliseconds(300)), "answered before its line was written")
            #expect(try await a.stopped(SIGKILL) == .signaled(SIGKILL))
            try FileManager.default.removeItem(at: hold)

            let restarted = DaemonProcess(sharing: a)
            defer { restarted.cleanup() }
            try await restarted.start()
            _ = try await watchers[1].events { $0.isRemoteChange(of: "queued", from: cluster.names[0]) }
            #expect(cluster.hosts[1].sceneBytes("queued") == Array(#"["kept"]"#.utf8))
            #expect(try await server.query("SELECT count(*) FROM scenesync.log WHERE scene = 'queued'") == "1")
        }
    }

    /// Once the writer's turn comes, the held answer follows, and the line is in the file by then.
    @Test func aHeldAnswerFollowsItsJournalLine() async throws {
        try await ClusterReplicationTests.withCluster(hosts: 2) { _, cluster, _ in
            let a = cluster.hosts[0]
            let hold = a.state.appendingPathComponent(".scenesync-test-hold-journal-writer")
            try Data().write(to: hold)
            let writer = try await a.connect()
            let observer = try await a.connect()
            let id = try await writer.send("set", ["scene": J.string("held"), "path": #"[{"value":"v"}]"#])
            #expect(try await eventually { try await observer.clusterStats()["pending"]?.int64Value == 1 })
            try FileManager.default.removeItem(at: hold)
            let answer = try await writer.response(to: id, "set")
            #expect(answer["ok"]?.boolValue == true)
            let journal = try String(contentsOf: a.state.appendingPathComponent("cluster-journal"), encoding: .utf8)
            #expect(journal.contains(#""scene":"held""#), "answered before the line was written")
        }
    }

    /// A `SIGKILL` that takes the line of a change back to the last snapshot's content (set B, pushed; set A again,
    /// or delete, which `scenes.restore_missing` undoes with A) leaves scene files the start-up merge finds equal to
    /// the snapshot, and the database on B. The start compares them with what the journal last saw this host hold,
    /// and pushes A, once. A clean restart after it records nothing.
    @Test func aChangeBackToTheSnapshotWhoseLineWasStillQueuedAtAKillReachesTheCluster() async throws {
        try await ClusterReplicationTests.withCluster(hosts: 2) { server, cluster, watchers in
            let (a, b) = (cluster.hosts[0], cluster.hosts[1])
            let writer = try await a.connect()
            func set(_ scene: String, _ value: String) async throws {
                try await writer.ok("set", ["scene": J.string(scene), "path": "[{\"value\":\"\(value)\"}]"])
            }
            func arrives(_ scene: String, _ value: String) async throws {
                _ = try await watchers[1].events {
                    $0.isRemoteChange(of: scene, from: cluster.names[0])
                        && $0["path"]?.arrayValue?.first?["value"]?.stringValue == value
                }
            }
            let journal = a.state.appendingPathComponent("cluster-journal")
            func lines(_ kind: String, of scene: String) throws -> Int {
                try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").count {
                    $0.contains("{\"t\":\"\(kind)\"") && $0.contains("\"scene\":\"\(scene)\"")
                }
            }
            for scene in ["flip", "gone"] { try await set(scene, "A") }
            try await writer.ok("snapshot")
            for scene in ["flip", "gone"] { try await set(scene, "B") }
            for scene in ["flip", "gone"] { try await arrives(scene, "B") }
            // Both answers are in the file: the journal knows this host held B when the line of A is lost.
            #expect(try await eventually { try lines("pushed", of: "flip") == 2 && lines("pushed", of: "gone") == 2 })

            let hold = a.state.appendingPathComponent(".scenesync-test-hold-journal-writer")
            try Data().write(to: hold)
            // Not answered while the writer is held: made, and reported pending. In one write, so that they are one
            // group commit (the next would wait for this one's answers).
            try await writer.send(
                raw: SocketClient.line(id: 900, "set", ["scene": J.string("flip"), "path": #"[{"value":"A"}]"#])
                    + SocketClient.line(id: 901, "delete", ["scene": J.string("gone")]))
            let observer = try await a.connect()
            #expect(try await eventually { try await observer.clusterStats()["pending"]?.int64Value == 2 })
            #expect(try lines("local", of: "flip") == 2, "the line of flip's A was written before the kill")
            #expect(try lines("local", of: "gone") == 2, "the line of gone's deletion was written before the kill")
            #expect(try await a.stopped(SIGKILL) == .signaled(SIGKILL))
            try FileManager.default.removeItem(at: hold)

            let restarted = DaemonProcess(sharing: a)
            defer { restarted.cleanup() }
            try await restarted.start()
            do {
                try await arrives("flip", "A")
                try await arrives("gone", "A")
            } catch {
                print("hostA:\n\(restarted.stderrText)")
                throw error
            }
            #expect(b.sceneBytes("flip") == Array(#"["A"]"#.utf8))
            #expect(b.sceneBytes("gone") == Array(#"["A"]"#.utf8))
            for scene in ["flip", "gone"] {
                #expect(try await server.query("SELECT count(*) FROM scenesync.log WHERE scene = '\(scene)'") == "3")
            }
            let client = try await restarted.connect()
            #expect(try await eventually { try await client.clusterStats()["pending"]?.int64Value == 0 })

            // A clean restart, with the database down so that a change recorded at the start stays pending.
            #expect(try await restarted.stopped(SIGTERM) == .exited(0))
            try await server.stop(immediate: true)
            let again = DaemonProcess(sharing: a)
            defer { again.cleanup() }
            try await again.start()
            #expect(try await again.connect().clusterStats()["pending"]?.int64Value == 0)
            #expect(try lines("local", of: "flip") == 0 && lines("local", of: "gone") == 0)
        }
    }
}
