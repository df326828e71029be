import Foundation
import SceneSyncCore
import Testing

/// A host never applies a change of its own name that it did not push (§9): here another host with the same
/// `cluster.host`, whose pushes the first host's journal cannot account for.
extension ClusterJournalTests {
    static func twin(_ server: PostgresServer) throws -> DaemonProcess {
        try DaemonProcess(
            config: """
                socket:
                  heartbeat_s: 3600
                cluster:
                  postgres: "\(server.url)"
                  host: twin
                """)
    }

    @Test(TestEnvironment.postgres) func aChangeOfThisHostsNameFromAnotherStreamStopsReplication() async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let first = try Self.twin(server)
        defer { first.cleanup() }
        try await first.start()
        let writer = try await first.connect()
        _ = try await writer.ok("set", ["scene": J.string("x"), "path": #"[{"value":1}]"#])
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try await writer.clusterStats()["pushed"]?.uint64Value == 1
            })
        // Restarted, it has replicated before: its stream record is there.
        #expect(try await first.stop() == 0)
        try await first.start()
        let client = try await first.connect()
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try await client.clusterStats()["connected"]?.boolValue == true
            })
        let watcher = try await first.connect()
        try await watcher.subscribe()
        _ = try await watcher.events(until: "synced")

        let second = try Self.twin(server)
        defer { second.cleanup() }
        try await second.start()
        let other = try await second.connect()
        _ = try await other.ok("set", ["scene": J.string("y"), "path": #"[{"value":2}]"#])

        let warning = try #require(try await watcher.events { $0["event"]?.stringValue == "warning" }.last)
        #expect(warning["code"]?.stringValue == "cluster_unavailable")
        #expect(
            warning["message"]?.stringValue?.contains("the database holds change") == true, "\(warning.text)")
        let stats = try await client.clusterStats()
        #expect(stats["journal"]?.stringValue == "damaged", "\(stats.text)")
        #expect(
            stats["journal_damage"]?.stringValue?.contains("of this host's name (twin) from push stream") == true,
            "\(stats.text)")
        #expect(stats["connected"]?.boolValue == false, "\(stats.text)")
        #expect(await first.logs("replication is stopped"))
        // Not applied, and nothing more is pushed; the host's changes are kept in its journal.
        #expect(first.readScene("y") == nil)
        _ = try await client.ok("set", ["scene": J.string("z"), "path": #"[{"value":3}]"#])
        #expect(try await client.clusterStats()["pending"]?.uint64Value == 1)
        #expect(try await first.stop() == 0)
    }
}
