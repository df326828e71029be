import Foundation
import SceneSyncCore
import Testing

/// A journal that cannot be used at all, or that is gone while the host replicated before (§9, "A damaged, emptied or
/// missing journal"): the host never exits for it and never takes it for a first start; it works alone, says so,
/// and leaves whatever is there as it is.
extension ClusterJournalTests {
    /// What a subscriber, `stats.cluster` and the log say of a host whose journal is damaged; `reason` is the start
    /// of `journal_damage`.
    static func expectDamageReported(_ daemon: DaemonProcess, reason: String) async throws {
        let watcher = try await daemon.connect()
        try await watcher.subscribe()
        let warning = try #require(try await watcher.events { $0["event"]?.stringValue == "warning" }.last)
        #expect(warning["code"]?.stringValue == "cluster_unavailable")
        #expect(warning["message"]?.stringValue?.contains("journal is damaged (\(reason)") == true, "\(warning.text)")
        let client = try await daemon.connect()
        let stats = try await client.clusterStats()
        #expect(stats["journal"]?.stringValue == "damaged", "\(stats.text)")
        #expect(stats["journal_damage"]?.stringValue?.hasPrefix(reason) == true, "\(stats.text)")
        #expect(await daemon.logs("the cluster journal is damaged"))
        // The host still works alone.
        _ = try await client.ok("set", ["scene": J.string("alone"), "path": #"[{"value":1}]"#])
        #expect(daemon.readScene("alone") != nil)
    }

    /// A directory in place of the journal (what really fails to read, even as root) used to make the daemon exit
    /// before it was ready: a restart loop under systemd.
    @Test func aDirectoryInPlaceOfTheJournalIsDamageNotAnExit() async throws {
        let daemon = try Self.hostWithoutADatabase()
        defer { daemon.cleanup() }
        let journal = daemon.state.appending(path: "cluster-journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        try Data("kept".utf8).write(to: journal.appending(path: "inside"))
        try await daemon.start()
        try await Self.expectDamageReported(daemon, reason: "the journal is not a regular file but a directory")
        #expect(try await daemon.stop() == 0)
        #expect(try Data(contentsOf: journal.appending(path: "inside")) == Data("kept".utf8))
    }

    /// A host that replicated before (its state directory has the stream record) finds its journal emptied or
    /// removed after it was stopped, by a crash or cleanly, with a change acknowledged and not pushed: damage,
    /// never a first start, and the emptied file is kept as it is.
    @Test(arguments: [(SIGKILL, true), (SIGKILL, false), (SIGTERM, true), (SIGTERM, false)])
    func anEmptiedOrMissingJournalOfAHostThatReplicatedIsDamage(signal: Int32, emptied: Bool) async throws {
        let daemon = try Self.hostWithoutADatabase()
        defer { daemon.cleanup() }
        try await daemon.start()
        let record = daemon.state.appending(path: "cluster-stream")
        #expect(FileManager.default.fileExists(atPath: record.path))
        let client = try await daemon.connect()
        _ = try await client.ok("set", ["scene": J.string("a"), "path": #"[{"value":1}]"#])
        #expect(try await client.clusterStats()["pending"]?.uint64Value == 1)
        _ = try await client.sync()
        _ = try await daemon.stop(signal)

        let journal = daemon.state.appending(path: "cluster-journal")
        if emptied {
            try Data().write(to: journal)
        } else {
            try FileManager.default.removeItem(at: journal)
        }
        let recordBefore = try Data(contentsOf: record)
        try await daemon.start()
        let reason = "the journal is \(emptied ? "empty" : "missing"), but this host replicated before"
        try await Self.expectDamageReported(daemon, reason: reason)
        #expect(try await daemon.connect().clusterStats()["pending"]?.uint64Value == 0)
        #expect(try await daemon.stop() == 0)
        if emptied {
            #expect(try Data(contentsOf: journal).isEmpty)
        } else {
            #expect(!FileManager.default.fileExists(atPath: journal.path))
        }
        #expect(try Data(contentsOf: record) == recordBefore)
    }
}
