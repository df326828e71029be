import Foundation
import SceneSyncCore
import Testing

/// The cluster journal's writer runs after the engine's turn: a change is answered once its line is queued.
extension ClusterReplicationTests {
    /// A `SIGKILL` before the writer's turn (held here by the test hook `.scenesync-test-hold-journal-writer`)
    /// takes the change's journal line, but not the change: the next start finds its scene file different from the
    /// last snapshot, records it again and pushes it, once.
    @Test func aChangeWhoseJournalLineWasStillQueuedAtAKillIsPushedAfterTheRestart() async throws {
        try await Self.withCluster(hosts: 2) { server, cluster, watchers in
            let a = cluster.hosts[0]
            let hold = a.state.appendingPathComponent(".scenesync-test-hold-journal-writer")
            try Data().write(to: hold)
            let writer = try await a.connect()
            try await writer.ok("set", ["scene": J.string("queued"), "path": #"[{"value":"kept"}]"#])
            #expect(try await writer.clusterStats()["pending"]?.int64Value == 1)
            let journal = try String(contentsOf: a.state.appendingPathComponent("cluster-journal"), encoding: .utf8)
            #expect(!journal.contains(#""scene":"queued""#), "the line was written before the kill")
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
}
