import Foundation
import SceneSyncCore
import Testing

/// Push batches (§9): several changes of one host in one transaction, idempotent by stream and push
/// number, with the conflict rule applied change by change; and the receiving host applying them in order.
@Suite(.serialized, TestEnvironment.postgres)
struct ClusterBatchTests {
    /// Calls `push_batch` as a host named `host` would, with the changes as `(push, scene, content, base)`.
    static func pushBatch(
        _ server: PostgresServer, host: String, stream: String, _ changes: [(Int, String, String?, Int)]
    ) async throws -> [String] {
        func array(_ items: [String], _ type: String) -> String { "ARRAY[\(items.joined(separator: ","))]::\(type)[]" }
        let sql = """
            SELECT r_push || ' ' || r_seq || ' ' || r_version || ' ' || r_state FROM scenesync.push_batch('\(host)', \
            '\(stream)', \(array(changes.map { "\($0.0)" }, "bigint")), \(array(changes.map { "'\($0.1)'" }, "text")), \
            \(array(changes.map { $0.2 == nil ? "true" : "false" }, "boolean")), \
            \(array(changes.map { "convert_to('\($0.2 ?? "")', 'UTF8')" }, "bytea")), \
            \(array(changes.map { _ in "'array'" }, "text")), \(array(changes.map { _ in "'{}'" }, "text")), \
            \(array(changes.map { "\($0.3)" }, "bigint")), 10000, 'scenesync_changes')
            """
        return try await server.query(sql).split(separator: "\n").map(String.init)
    }

    @Test func aBatchIsOneTransactionRetriedWithoutDuplicatesWithConflictsChangeByChange() async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let cluster = try ClusterHosts(server: server, count: 1)
        defer { cluster.cleanup() }
        try await cluster.startAll()
        let client = try await cluster.hosts[0].connect()
        client.timeout = .seconds(60)
        // The host creates the layout on its first connection.
        #expect(
            try await eventually(timeout: .seconds(60)) {
                try await client.clusterStats()["connected"]?.boolValue == true
            })

        // Two changes to one scene in one batch: the second is based on the first, no conflict.
        let first = try await Self.pushBatch(
            server, host: "far", stream: "s1", [(1, "p", "[1]", 0), (2, "p", "[2]", 0), (3, "q", "[3]", 0)])
        #expect(first == ["1 1 1 committed", "2 2 2 committed", "3 3 1 committed"])
        // The answer was lost: the batch is retried with one more change. Nothing commits twice.
        let retry = try await Self.pushBatch(
            server, host: "far", stream: "s1", [(2, "p", "[2]", 0), (3, "q", "[3]", 0), (4, "q", nil, 1)])
        #expect(retry == ["2 2 2 duplicate", "3 3 1 duplicate", "4 4 2 committed"])
        #expect(try await server.query("SELECT count(*) FROM scenesync.log WHERE host = 'far'") == "4")
        #expect(try await server.query("SELECT last_push FROM scenesync.hosts WHERE host = 'far'") == "4")

        // Another host based on a stale version of p (1, while the database holds 2): its first change carries
        // the overwritten state as a conflict, its second (based on the first) does not. An unchanged deletion
        // of a scene that is gone takes no sequence.
        let stale = try await Self.pushBatch(
            server, host: "near", stream: "t1", [(1, "p", "[7]", 1), (2, "p", "[8]", 1), (3, "q", nil, 0)])
        #expect(stale == ["1 5 3 committed", "2 6 4 committed", "3 4 2 unchanged"])
        let conflicts = try await server.query(
            "SELECT seq || ' ' || coalesce(convert_from(conflict_content, 'UTF8'), '-') || ' ' || "
                + "coalesce(conflict_host, '-') FROM scenesync.log WHERE host = 'near' ORDER BY seq")
        #expect(conflicts == "5 [2] far\n6 - -")
        #expect(try await server.query("SELECT seq FROM scenesync.meta") == "6")

        // The host applied every change once, in database order: p's versions 1 to 4, q created then deleted.
        let host = cluster.hosts[0]
        #expect(await eventually { host.sceneBytes("p") == Array("[8]".utf8) })
        #expect(try await eventually { try await client.clusterStats()["cluster_version_seen"]?.int64Value == 6 })
        #expect(host.sceneBytes("q") == nil)
        let history = try await client.ok("history", ["scene": J.string("p")])
        let records = history["records"]?.arrayValue ?? []
        #expect(records.count == 4)
        #expect(records.first?["conflict"] == nil)
        #expect(records.dropFirst().first?["conflict"] != nil)
        #expect(try await client.clusterStats()["received"]?.int64Value == 6)
    }

    @Test func changesQueuedDuringAnOutageArePushedAsOneBatchAndArriveInOrder() async throws {
        let server = try await PostgresServer.start()
        defer { server.cleanup() }
        let cluster = try ClusterHosts(server: server, count: 2)
        defer { cluster.cleanup() }
        try await cluster.startAll()
        let watchers = try await ClusterReplicationTests.subscribers(cluster)
        let writer = try await cluster.hosts[0].connect()
        try await writer.ok("set", ["scene": J.string("burst"), "path": #"[{"value":0}]"#])
        _ = try await watchers[1].events { $0.isRemoteChange(of: "burst", from: "hostA") }

        try await server.stop(immediate: true)
        _ = try await watchers[0].events { $0["code"]?.stringValue == "cluster_unavailable" }
        for round in 1...60 {
            try await writer.ok("set", ["scene": J.string("burst"), "path": "[{\"value\":\(round)}]"])
            if round % 20 == 0 {
                try await writer.ok("set", ["scene": J.string("side-\(round)"), "path": "[{\"value\":\(round)}]"])
            }
        }
        #expect(try await writer.clusterStats()["pending"]?.int64Value == 63)
        try await server.startServer()

        // Host B gets every one of them, in A's order, each once.
        var values: [Int] = []
        while values.last != 60 {
            let change = try #require(
                try await watchers[1].events { $0.isRemoteChange(of: "burst", from: "hostA") }.last)
            values.append(change["path"]?.arrayValue?.first?["value"]?.int64Value.map(Int.init) ?? -1)
        }
        #expect(values == Array(1...60))
        #expect(try await eventually { try await writer.clusterStats()["pending"]?.int64Value == 0 })
        // One transaction for the queue (now() is a transaction's start): 63 changes, one commit time.
        let commits = try await server.query(
            "SELECT count(DISTINCT changed_at) FROM scenesync.log WHERE host = 'hostA' AND seq > 1")
        #expect(commits == "1")
        #expect(try await server.query("SELECT count(*) FROM scenesync.log WHERE host = 'hostA'") == "64")
        #expect(cluster.hosts[1].sceneBytes("side-60") == cluster.hosts[0].sceneBytes("side-60"))
    }
}
