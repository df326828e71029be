import Foundation
import SceneSyncCore
import Testing

/// The operator's bad day (§9, "A damaged, emptied or missing journal"): a host acknowledges a change while the
/// database is down, is killed, and its journal is emptied. Taken for a first start, it used to apply its own
/// earlier push back to itself as another host's change, silently overwriting what it acknowledged.
extension ClusterJournalTests {
    @Test(TestEnvironment.postgres) func anEmptiedJournalNeverAppliesTheHostsOwnPushBack() async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let cluster = try ClusterHosts(server: server, count: 2)
        defer { cluster.cleanup() }
        try await cluster.startAll()
        let (a, b) = (cluster.hosts[0], cluster.hosts[1])
        let writer = try await a.connect()
        _ = try await writer.ok("set", ["scene": J.string("x"), "path": #"[{"value":1}]"#])
        #expect(await eventually(timeout: .seconds(60)) { b.sceneBytes("x") == a.sceneBytes("x") })

        try await server.stop()
        _ = try await writer.ok("set", ["scene": J.string("x"), "path": #"[{"value":2}]"#])
        let acknowledged = try #require(a.sceneBytes("x"))
        #expect(try await writer.clusterStats()["pending"]?.uint64Value == 1)
        #expect(try await a.stopped(SIGKILL) == .signaled(SIGKILL))
        try Data().write(to: a.state.appending(path: "cluster-journal"))
        try await server.startServer()

        let restarted = DaemonProcess(sharing: a)
        defer { restarted.cleanup() }
        try await restarted.start()
        let client = try await restarted.connect()
        let stats = try await client.clusterStats()
        #expect(stats["journal"]?.stringValue == "damaged", "\(stats.text)")
        #expect(
            stats["journal_damage"]?.stringValue?.hasPrefix("the journal is empty, but this host replicated before")
                == true, "\(stats.text)")
        // B is back on the database, and a change of it reaches the database; A has pushed nothing since its
        // start and keeps what it acknowledged.
        let other = try await b.connect()
        _ = try await other.ok("set", ["scene": J.string("y"), "path": #"[{"value":5}]"#])
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try await server.query("SELECT count(*) FROM scenesync.log WHERE scene = 'y'") == "1"
            })
        #expect(a.sceneBytes("x") == acknowledged)
        let x = try await client.ok("get", ["scene": J.string("x")])
        #expect(x["path"]?.arrayValue?.first?["value"]?.int64Value == 2, "\(x.text)")
        let rows = try await server.query("SELECT count(*) FROM scenesync.log WHERE host = 'hostA'")
        #expect(rows == "1", "hostA pushed \(rows)")
        #expect(try await client.clusterStats()["connected"]?.boolValue == false)
    }
}
