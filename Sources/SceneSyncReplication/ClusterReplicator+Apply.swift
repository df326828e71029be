import Logging
import PostgresNIO
import SceneSyncCore
import SceneSyncDaemon
import Synchronization

/// Applying the database's changes (§9): in database order, each at most once.
extension ClusterReplicator {
    /// Applies every database change after the cursor, in order. When the log no longer reaches back to the
    /// cursor (pruned while this host was away), it catches up from the current-state table instead.
    func catchUp(_ connection: PostgresConnection) async throws {
        while true {
            let cursor = journal.withState { $0.cursor }
            let rows = try await connection.query(
                """
                SELECT seq, scene, version, content, format, host, stream, origin, conflict_content, conflict_format, \
                conflict_host, conflict_origin FROM \(unescaped: schema).log WHERE seq > \(cursor) ORDER BY seq \
                LIMIT \(unescaped: String(ClusterReplicator.batchSize))
                """, logger: logger)
            var batch: [LogRow] = []
            let columns = (
                Int64, String, Int64, ByteBuffer?, String, String, String, String, ByteBuffer?, String?, String?,
                String?
            ).self
            for try await row in rows.decode(columns) {
                batch.append(
                    LogRow(
                        seq: row.0, scene: row.1, version: row.2, content: row.3.map { Array($0.readableBytesView) },
                        format: row.4, host: row.5, stream: row.6, origin: row.7,
                        conflictContent: row.8.map { Array($0.readableBytesView) }, conflictFormat: row.9,
                        conflictHost: row.10, conflictOrigin: row.11))
            }
            status.withLock { $0.progress = .now }
            guard let first = batch.first else { return }
            if first.seq > cursor + 1 {
                try await catchUpFromState(connection, cursor: cursor)
                continue
            }
            try await apply(batch, advance: true)
            if batch.count < ClusterReplicator.batchSize { return }
        }
    }

    /// One change per scene whose current state in the database differs from this host's, then the cursor moves
    /// to the sequence read before the states: changes after it are read from the log again, harmlessly.
    func catchUpFromState(_ connection: PostgresConnection, cursor: Int64) async throws {
        let top = try await connection.query("SELECT seq FROM \(unescaped: schema).meta WHERE id = 1", logger: logger)
        var newest: Int64 = cursor
        for try await (seq) in top.decode(Int64.self) { newest = seq }
        logger.notice(
            "catching up from the current state: the change log no longer reaches back to this host's cursor",
            metadata: ["cursor": "\(cursor)", "newest": "\(newest)"])
        let rows = try await connection.query(
            "SELECT seq, scene, version, content, format, host, origin FROM \(unescaped: schema).scenes WHERE seq > \(cursor) ORDER BY scene",
            logger: logger)
        var states: [LogRow] = []
        for try await row in rows.decode((Int64, String, Int64, ByteBuffer?, String, String, String).self) {
            states.append(
                LogRow(
                    seq: row.0, scene: row.1, version: row.2, content: row.3.map { Array($0.readableBytesView) },
                    format: row.4, host: row.5, stream: "", origin: row.6))
        }
        try await apply(states, advance: false)
        journal.recordDone(seq: newest, scene: nil, version: nil)
    }

    /// Hands database changes to the engine in one batch, in database order, except this host's own and those
    /// older than this host's own latest committed change to their scene (which supersedes them). Each is marked
    /// received, in the journal's file, before the engine sees it, and done (the cursor moved to it, with
    /// `advance`) in order after.
    func apply(_ rows: [LogRow], advance: Bool) async throws {
        guard let newest = rows.map(\.seq).max() else { return }
        try checkOwnRows(rows)
        let (stream, ownSeqs, cursor) = journal.withState { ($0.stream, $0.ownSeqs, $0.cursor) }
        /// Per row, the scene it changes when the engine gets it, and the digest of its content.
        var targets: [(scene: SceneID, digest: UInt64)?] = []
        var received: [ReplicationJournal.Received] = []
        var changes: [RemoteChange] = []
        for row in rows {
            guard let scene = SceneID(row.scene), shares(scene),
                !(row.host == host && row.stream == stream), row.seq > ownSeqs[scene] ?? 0
            else {
                targets.append(nil)
                continue
            }
            let digest = row.content.map(SceneStore.digest) ?? 0
            targets.append((scene, digest))
            received.append(.init(seq: row.seq, scene: scene, digest: digest))
            let (change, problems) = ClusterReplicator.remoteChange(row, scene: scene, localHost: host)
            for problem in problems {
                logger.warning(
                    "a remote change is applied without what of it cannot be read",
                    metadata: [
                        "scene": "\(scene)", "seq": "\(row.seq)", "host": "\(row.host)", "problem": "\(problem)",
                    ])
            }
            changes.append(change)
        }
        journal.recordReceived(received)
        // In the file before the engine writes the scene files: after a crash, such a file is then read back as
        // equal to the database, never taken for a change of this host and pushed back.
        if !received.isEmpty { await persistRecords() }
        let outcomes = await engine.applyRemote(changes)
        var next = outcomes.makeIterator()
        var done: [ReplicationJournal.Done] = []
        var applied = 0
        // Whatever happens, what was done so far is recorded.
        defer {
            journal.recordDone(done)
            status.withLock { $0.received += applied }
        }
        for (row, target) in zip(rows, targets) {
            let seq = advance ? row.seq : cursor
            guard let (scene, digest) = target else {
                done.append(.init(seq: seq))
                continue
            }
            switch next.next() ?? .stopping {
            case .applied:
                applied += 1
                done.append(.init(seq: seq, scene: scene, version: row.version, digest: digest))
            case .unchanged:
                done.append(.init(seq: seq, scene: scene, version: row.version, digest: digest))
            case .superseded:
                done.append(.init(seq: seq))
            case .refused(let reason):
                logger.warning(
                    "a remote change could not be applied", metadata: ["scene": "\(scene)", "reason": "\(reason)"])
                done.append(.init(seq: seq))
            case .stopping:
                throw CancellationError()
            }
        }
        // Seen once taken in: a host whose `cluster_version_seen` is the database's newest holds every change up to
        // it in its scene files, so that comparing the two tells an operator (or a test) that the hosts converged.
        status.withLock { $0.seen = max($0.seen, newest) }
    }
}
