import Foundation
import SceneSyncCore
import Testing

/// Recovery converges (§9, "A damaged, emptied or missing journal"): a host with a change acknowledged and not
/// pushed is stopped, its journal is damaged, and it works alone while the other host goes on; after the documented
/// recovery both hosts and the database hold the same state, and every acknowledged change is in it or in a
/// `conflict` record.
@Suite(TestEnvironment.postgres)
struct ClusterRecoveryTests {
    /// What is done to the stopped host's journal, and how the operator recovers.
    enum Damage: String, Sendable, CustomTestStringConvertible {
        case emptied, missing, directory, fifo, unreadable, damagedLine, tornLastLine

        var testDescription: String { rawValue }

        /// The start of `stats.cluster.journal_damage` while damaged; `nil` when the host is not damaged.
        var reported: String? {
            switch self {
            case .emptied: "the journal is empty, but this host replicated before"
            case .missing: "the journal is missing, but this host replicated before"
            case .directory: "the journal is not a regular file but a directory"
            case .fifo: "the journal is not a regular file but a FIFO"
            case .unreadable: "the journal cannot be read"
            case .damagedLine: "line 2: not JSON"
            case .tornLastLine: nil
            }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var damage: Damage
        var signal: Int32
        /// Whether a snapshot holds the unpushed change when the host is stopped (a clean stop always writes one).
        var snapshotted: Bool

        var testDescription: String {
            "\(damage) after \(signal == SIGKILL ? "SIGKILL" : "SIGTERM")\(snapshotted ? ", snapshotted" : "")"
        }
    }

    static let cases: [Case] = [
        Case(damage: .emptied, signal: SIGKILL, snapshotted: true),
        Case(damage: .missing, signal: SIGTERM, snapshotted: true),
        Case(damage: .directory, signal: SIGKILL, snapshotted: false),
        Case(damage: .fifo, signal: SIGTERM, snapshotted: true),
        Case(damage: .unreadable, signal: SIGKILL, snapshotted: true),
        Case(damage: .damagedLine, signal: SIGKILL, snapshotted: false),
        Case(damage: .tornLastLine, signal: SIGKILL, snapshotted: true),
    ]

    @Test(arguments: cases) func recoveryConverges(_ test: Case) async throws {
        try await ClusterReplicationTests.withCluster(hosts: 2, subscribed: false) { server, cluster, _ in
            try await Self.damageAndRecover(test, server: server, cluster: cluster)
        }
    }

    /// Host A of `cluster` goes through `test`'s bad day and its recovery, while host B goes on.
    static func damageAndRecover(_ test: Case, server: PostgresServer, cluster: ClusterHosts) async throws {
        let (a, b) = (cluster.hosts[0], cluster.hosts[1])
        var acknowledged: [String] = []
        func set(_ client: SocketClient, _ scene: String, _ value: String) async throws {
            _ = try await client.ok("set", ["scene": J.string(scene), "path": "[{\"value\":\"\(value)\"}]"])
            acknowledged.append(value)
        }

        // Replicated before: both hosts hold A's first changes.
        var writer = try await a.connect()
        try await set(writer, "u0", "u0-pushed")
        try await set(writer, "lag", "lag-1")
        try await set(writer, "both", "both-1")
        let other = try await b.connect()
        #expect(try await Self.converged(cluster, server: server))

        // Acknowledged while the database is down: pending when A stops.
        try await server.stop()
        try await set(writer, "u0", "u0-unpushed")
        #expect(try await writer.clusterStats()["pending"]?.uint64Value == 1)
        if test.snapshotted { _ = try await writer.ok("snapshot") }
        _ = try await writer.sync()
        _ = try await a.stopped(test.signal)
        try Self.damage(a.state.appending(path: "cluster-journal"), test.damage)
        try await server.startServer()
        if test.damage == .unreadable {
            // Root reads any file; without these two capabilities it cannot read one of mode 000.
            a.launcher = ["/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
        }

        // A works alone and says why; B goes on, and A changes what B changed meanwhile.
        try await a.start()
        writer = try await a.connect()
        if let reason = test.damage.reported {
            try await ClusterJournalTests.expectDamageReported(a, reason: reason)
        }
        try await set(other, "lag", "lag-2")
        try await set(other, "both", "both-b")
        try await set(other, "b0", "b0")
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try await server.query("SELECT count(*) FROM scenesync.log WHERE host = 'hostB'") == "3"
            })
        if test.damage.reported == nil {
            // Not damaged: A follows B, so its next change is based on B's.
            #expect(await eventually(timeout: .seconds(60)) { a.readScene("b0") != nil })
        }
        try await set(writer, "both", "both-a")
        try await set(writer, "d0", "d0-damaged")
        _ = try await writer.sync()

        // The documented recovery, then a restart; until then the journal is left as the damage left it.
        _ = try await a.stopped(SIGTERM)
        try Self.expectKept(a.state.appending(path: "cluster-journal"), test.damage)
        a.launcher = []
        try Self.recover(a.state, test.damage)
        try await a.start()
        #expect(try await Self.converged(cluster, server: server))

        let expected = ["u0": "u0-unpushed", "d0": "d0-damaged", "both": "both-a", "lag": "lag-2", "b0": "b0"]
        for (scene, value) in expected {
            let content = "[\"\(value)\"]"
            #expect(a.readScene(scene) == content, "\(scene) on A")
            #expect(b.readScene(scene) == content, "\(scene) on B")
            let stored = try await server.query(
                "SELECT convert_from(content, 'UTF8') FROM scenesync.scenes WHERE scene = '\(scene)'")
            #expect(stored == content, "\(scene) in the database")
        }
        // Nothing acknowledged is silently gone: each change reached the database, as a change every host received
        // or as the state a later one overwrote (a conflict every other host recorded).
        let logged = try await server.query(
            "SELECT convert_from(content, 'UTF8') FROM scenesync.log UNION ALL "
                + "SELECT convert_from(conflict_content, 'UTF8') FROM scenesync.log WHERE conflict_content IS NOT NULL")
        for value in acknowledged {
            #expect(logged.contains("\"\(value)\""), "\(value) never reached the database")
        }
        if test.damage.reported != nil {
            // A's change made while damaged overwrote B's later one: B holds it as a conflict.
            let history = try await other.ok("history", ["scene": J.string("both"), "limit": "1"])
            let last = try #require(history["records"]?.arrayValue?.first, "\(history.text)")
            #expect(last["conflict"]?["path"] == (try json(#"[{"value":"both-b"}]"#)), "\(history.text)")
        }
        let stats = try await a.connect().clusterStats()
        #expect(stats["journal"]?.stringValue == "ok", "\(stats.text)")
    }

    /// Every host has pushed everything and seen the database's newest change, and reports itself connected.
    static func converged(_ cluster: ClusterHosts, server: PostgresServer) async throws -> Bool {
        let clients = try await cluster.hosts.asyncMap { try await $0.connect() }
        return try await eventually(timeout: .seconds(60)) {
            let newest = try await server.query("SELECT seq FROM scenesync.meta")
            for client in clients {
                let stats = try await client.clusterStats()
                guard stats["pending"]?.int64Value == 0, stats["connected"]?.boolValue == true,
                    stats["cluster_version_seen"]?.int64Value == Int64(newest)
                else { return false }
            }
            return true
        }
    }

    static func damage(_ journal: URL, _ damage: Damage) throws {
        let manager = FileManager.default
        switch damage {
        case .emptied:
            try Data().write(to: journal)
        case .missing:
            try manager.removeItem(at: journal)
        case .directory:
            try manager.removeItem(at: journal)
            try manager.createDirectory(at: journal, withIntermediateDirectories: false)
        case .fifo:
            try manager.removeItem(at: journal)
            #expect(mkfifo(journal.path, 0o600) == 0)
        case .unreadable:
            #expect(chmod(journal.path, 0) == 0)
        case .damagedLine:
            var lines = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map(String.init)
            lines.insert("not a journal line", at: 1)
            try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: journal)
        case .tornLastLine:
            let handle = try FileHandle(forWritingTo: journal)
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(#"{"t":"local","n":99,"sce"#.utf8))
            try handle.close()
        }
    }

    static func expectKept(_ journal: URL, _ damage: Damage) throws {
        var status = stat()
        let found = lstat(journal.path, &status) == 0
        switch damage {
        case .emptied: #expect(found && status.st_size == 0)
        case .missing: #expect(!found)
        case .directory: #expect(found && status.st_mode & S_IFMT == S_IFDIR)
        case .fifo: #expect(found && status.st_mode & S_IFMT == S_IFIFO)
        case .unreadable: #expect(found && status.st_mode & S_IFMT == S_IFREG && status.st_mode & 0o777 == 0)
        case .damagedLine:
            #expect(try String(contentsOf: journal, encoding: .utf8).contains("\nnot a journal line\n"))
        case .tornLastLine: #expect(found)
        }
    }

    /// What docs/replication.md tells the operator: repair the damaged line, or remove both the journal and the
    /// stream record.
    static func recover(_ state: URL, _ damage: Damage) throws {
        let journal = state.appending(path: "cluster-journal")
        switch damage {
        case .damagedLine:
            let lines = try String(contentsOf: journal, encoding: .utf8).split(separator: "\n").map(String.init)
            let repaired = lines.filter { $0 != "not a journal line" }
            try Data((repaired.joined(separator: "\n") + "\n").utf8).write(to: journal)
        case .tornLastLine:
            break
        case .emptied, .missing, .directory, .fifo, .unreadable:
            try? FileManager.default.removeItem(at: journal)
            try FileManager.default.removeItem(at: state.appending(path: "cluster-stream"))
        }
    }
}
