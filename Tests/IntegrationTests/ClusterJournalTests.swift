import Foundation
import SceneSyncCore
import Testing

/// A damaged cluster journal (§9) stops replication loudly and is kept as it is; no database is needed to see it.
@Suite struct ClusterJournalTests {
    /// Two pending changes, the second line overwritten by a bad block.
    static let damagedJournal = """
        {"t":"stream","id":"s1","next":3,"boot":"b"}
        {"t":"state","cursor":0,"scenes":[]}
        {"t":"local","n":1,"scene":"a","format":"array","content":"5b315d","origin":{"source":"file"}}
        \u{0}\u{0}\u{0}\u{0}
        {"t":"local","n":2,"scene":"a","format":"array","content":"5b325d","origin":{"source":"file"}}

        """

    /// A host whose database cannot be reached: what is checked here needs none.
    static func hostWithoutADatabase() throws -> DaemonProcess {
        try DaemonProcess(
            config: """
                cluster:
                  postgres: "postgres://nobody@/db?host=/nonexistent-scenesync-test"
                  host: hostA
                """)
    }

    @Test func aDamagedJournalStopsReplicationIsReportedAndIsKept() async throws {
        let daemon = try Self.hostWithoutADatabase()
        defer { daemon.cleanup() }
        try FileManager.default.createDirectory(at: daemon.state, withIntermediateDirectories: true)
        let journal = daemon.state.appending(path: "cluster-journal")
        try Data(Self.damagedJournal.utf8).write(to: journal)
        try await daemon.start()

        let watcher = try await daemon.connect()
        try await watcher.subscribe()
        let warning = try #require(try await watcher.events { $0["event"]?.stringValue == "warning" }.last)
        #expect(warning["code"]?.stringValue == "cluster_unavailable")
        // It names the journal and its damage, not the database, which may well be up.
        let message = warning["message"]?.stringValue ?? ""
        #expect(message.contains("journal is damaged (line 4: not JSON"), "\(warning.text)")
        #expect(message.contains(journal.path), "\(warning.text)")
        #expect(!message.contains("database"), "\(warning.text)")

        let client = try await daemon.connect()
        let stats = try await client.clusterStats()
        #expect(stats["journal"]?.stringValue == "damaged", "\(stats.text)")
        #expect(stats["journal_damage"]?.stringValue?.hasPrefix("line 4: not JSON") == true, "\(stats.text)")
        #expect(await daemon.logs("the cluster journal is damaged"))

        // The host still works alone; its change is not written to the damaged file.
        _ = try await client.ok("set", ["scene": J.string("a"), "path": #"[{"value":3}]"#])
        #expect(try await daemon.stop() == 0)
        #expect(try Data(contentsOf: journal) == Data(Self.damagedJournal.utf8))
    }

    /// The journal's appends are flushed to disk in the background; a write-back error (played by the test hook
    /// `.scenesync-test-fail-journal-sync`) is logged, not ignored.
    @Test func aJournalThatCannotBeFlushedIsLogged() async throws {
        let daemon = try Self.hostWithoutADatabase()
        defer { daemon.cleanup() }
        try await daemon.start()
        let journal = daemon.state.appending(path: "cluster-journal").path
        let inode = { () -> UInt64? in
            var st = stat()
            return stat(journal, &st) == 0 ? UInt64(st.st_ino) : nil
        }
        let before = try #require(inode())
        try Data().write(to: daemon.state.appending(path: ".scenesync-test-fail-journal-sync"))
        #expect(await eventually { daemon.stderrText.contains("cannot flush the cluster journal to disk") })
        // Treated like a failed append: the journal is rewritten whole (a new file), even with no database.
        #expect(await eventually { inode().map { $0 != before } ?? false })
    }

    /// A session whose work hangs inside the database client (played by the test hook
    /// `.scenesync-test-hang-session`, which also ignores cancellation) is abandoned by the stall watchdog, not
    /// forgotten: counted in `stats.cluster.abandoned_sessions` and logged, until it ends.
    @Test func aSessionStuckInTheClientIsCountedUntilItEnds() async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let cluster = try ClusterHosts(server: server, count: 1)
        defer { cluster.cleanup() }
        let host = cluster.hosts[0]
        host.extraEnvironment["SCENESYNC_TEST_CLUSTER_STALL_MS"] = "500"
        try FileManager.default.createDirectory(at: host.state, withIntermediateDirectories: true)
        let hang = host.state.appending(path: ".scenesync-test-hang-session")
        try Data().write(to: hang)
        try await host.start()
        let client = try await host.connect()
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try await client.clusterStats()["abandoned_sessions"]?.uint64Value ?? 0 > 0
            })
        #expect(await host.logs("a database session did not end when its connection was closed"))

        try FileManager.default.removeItem(at: hang)
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let stats = try await client.clusterStats()
                return stats["abandoned_sessions"]?.uint64Value == 0 && stats["connected"]?.boolValue == true
            })
        #expect(await host.logs("an abandoned database session ended at last"))
    }
}
