import Logging
import PostgresNIO
import SceneSyncCore
import SceneSyncDaemon

/// Recovery converges (§9, "A damaged, emptied or missing journal"): the shared scenes a start found with no record
/// in the journal are settled against the database before the first catch-up.
extension ClusterReplicator {
    /// For each adopted change (``ReplicationJournal/adopt(holding:)``) still pending, reads the scene's current
    /// state in the database:
    ///
    /// - none, or the same content: the change is pushed as it is (it creates the scene, or commits nothing);
    /// - another content, and the log holds this host's content as an earlier state of the scene: this host was
    ///   behind, not ahead. The change is withdrawn and the database's state applied;
    /// - another content the log never held: this host's own, never pushed (made while its journal was damaged,
    ///   or lost with it). It is pushed based on no version, so it commits as the later arrival with a `conflict`
    ///   carrying the state it overwrote, which every other host records.
    ///
    /// A content that was an earlier state but that this host set again while its journal was damaged cannot be
    /// told from a host that is behind; the documentation says so. Batches of ``batchSize``, each one query.
    func settleAdopted(_ connection: PostgresConnection) async throws {
        let adopted = status.withLock { $0.adopted }
        guard !adopted.isEmpty else { return }
        let (pendingNumbers, cursor) = journal.withState { state in
            (Set(state.pending.map(\.number)), state.cursor)
        }
        let waiting = adopted.filter { pendingNumbers.contains($0.number) }
        var start = 0
        var withdrawn = 0
        while start < waiting.count {
            let batch = Array(waiting[start..<min(start + ClusterReplicator.batchSize, waiting.count)])
            start += batch.count
            let behind = try await scenesBehind(batch, on: connection)
            let stale = batch.filter { behind[$0.scene] != nil }
            for change in stale { journal.withdraw(change) }
            withdrawn += stale.count
            // With a cursor, the log's changes of these scenes are behind it: their state is applied as in a
            // catch-up from state, and the cursor stays. Without one (a new push stream), the catch-up that follows
            // applies every change in order anyway.
            if cursor > 0 { try await apply(stale.compactMap { behind[$0.scene] }, advance: false) }
        }
        status.withLock { $0.adopted = [] }
        logger.notice(
            "shared scenes the cluster journal had no record of are settled with the database",
            metadata: [
                "pushed": "\(waiting.count - withdrawn)", "behind": "\(withdrawn)", "cursor": "\(cursor)",
            ])
    }

    /// The current state in the database of each scene of `batch` whose content there differs from the change's
    /// and whose log holds the change's content as an earlier state.
    private func scenesBehind(
        _ batch: [ReplicationJournal.Pending], on connection: PostgresConnection
    ) async throws -> [SceneID: LogRow] {
        let contents = try await contents(of: batch)
        let scenes = batch.map(\.scene.rawValue)
        let rows = try await connection.query(
            """
            SELECT s.seq, s.scene, s.version, s.content, s.format, s.host, s.origin \
            FROM unnest(\(scenes)::text[], \(contents)::bytea[]) AS a(scene, content) \
            JOIN \(unescaped: schema).scenes s ON s.scene = a.scene \
            WHERE s.content IS DISTINCT FROM a.content AND EXISTS (SELECT 1 FROM \(unescaped: schema).log l \
            WHERE l.scene = a.scene AND l.version < s.version AND l.content = a.content)
            """, logger: logger)
        var behind: [SceneID: LogRow] = [:]
        for try await row in rows.decode((Int64, String, Int64, ByteBuffer?, String, String, String).self) {
            guard let scene = SceneID(row.1) else { continue }
            behind[scene] = LogRow(
                seq: row.0, scene: row.1, version: row.2, content: row.3.map { Array($0.readableBytesView) },
                format: row.4, host: row.5, stream: "", origin: row.6)
        }
        status.withLock { $0.progress = .now }
        return behind
    }
}
