import Foundation
import SceneSyncCore
import Testing

/// A shared scene deleted after the last snapshot, by this host or by another, stays deleted across a crash.
extension ClusterKillTests {
    /// The last snapshot of host A has both scenes. A deletes `mine` (answered once its line is written, then
    /// pushed); B deletes `theirs`, which A applies. After a `SIGKILL` of A, its start finds both files missing:
    /// `scenes.restore_missing` would write the snapshot's content back, which the cluster would then take for a
    /// change of A's, undoing both deletions on every host. The journal saw A hold them deleted, so they stay
    /// deleted, and nothing reaches the database.
    @Test func sharedScenesDeletedAfterTheSnapshotStayDeletedAfterAKill() async throws {
        try await ClusterReplicationTests.withCluster(hosts: 2) { server, cluster, watchers in
            let (a, b) = (cluster.hosts[0], cluster.hosts[1])
            let (writerA, writerB) = (try await a.connect(), try await b.connect())
            for scene in ["mine", "theirs"] {
                try await writerA.ok("set", ["scene": J.string(scene), "path": #"[{"value":"A"}]"#])
                _ = try await watchers[1].events { $0.isRemoteChange(of: scene, from: cluster.names[0]) }
            }
            try await writerA.ok("snapshot")

            try await writerA.ok("delete", ["scene": J.string("mine")])
            try await writerB.ok("delete", ["scene": J.string("theirs")])
            _ = try await watchers[0].events { $0.isRemoteChange(of: "theirs", from: cluster.names[1]) }
            let journal = a.state.appendingPathComponent("cluster-journal")
            func doneLines(of scene: String) throws -> Int {
                try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").count {
                    $0.contains(#"{"t":"done""#) && $0.contains("\"scene\":\"\(scene)\"")
                }
            }
            // The deletion of `theirs` applied and in A's journal, and `mine`'s deletion pushed.
            #expect(try await eventually { try doneLines(of: "theirs") >= 1 })
            #expect(try await eventually { try await writerA.clusterStats()["pending"]?.int64Value == 0 })
            let logged = try await server.query("SELECT count(*) FROM scenesync.log")
            #expect(try await a.stopped(SIGKILL) == .signaled(SIGKILL))

            let restarted = DaemonProcess(sharing: a)
            defer { restarted.cleanup() }
            try await restarted.start()
            let client = try await restarted.connect()
            #expect(try await eventually { try await client.clusterStats()["pending"]?.int64Value == 0 })
            for scene in ["mine", "theirs"] {
                #expect(a.sceneBytes(scene) == nil, "\(scene) was written back")
                #expect(b.sceneBytes(scene) == nil, "\(scene) came back on the other host")
                let answer = try await client.request("get", ["scene": J.string(scene)])
                #expect(answer["error"]?["code"]?.stringValue == "not_found")
            }
            #expect(try await server.query("SELECT count(*) FROM scenesync.log") == logged)
        }
    }
}
