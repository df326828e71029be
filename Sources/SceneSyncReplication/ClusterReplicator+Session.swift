import Logging
import PostgresNIO
import SceneSyncCore
import SceneSyncDaemon
import Synchronization

extension ClusterReplicator {
    /// One row of the database's change log, or of its current-state table during a catch-up from state.
    struct LogRow: Sendable {
        var seq: Int64
        var scene: String
        var version: Int64
        var content: [UInt8]?
        var format: String
        var host: String
        var stream: String
        var origin: String
        var conflictContent: [UInt8]?
        var conflictFormat: String?
        var conflictHost: String?
        var conflictOrigin: String?
    }

    static let batchSize = 512
    /// How often an idle session checks its connection with a catch-up query: a connection lost without a word
    /// (a database host that vanished) is noticed within this time.
    static let probeInterval = Duration.seconds(2)

    /// How long a session may make no progress (no catch-up, no push answered) before its connection is closed
    /// and made again: a connection that died without its socket closing (or a setup step that never finishes)
    /// would otherwise hold the host alone and silent.
    static let stallLimit = Duration.seconds(15)

    /// Runs ``runSession(on:)`` under a watchdog that closes the connection when the session stalls.
    ///
    /// The session runs as its own task, and a stall returns without waiting for it: a query on a connection that
    /// closed while it was being set up can wait forever in the client (seen with `pg_ctl stop -m immediate` during
    /// a host's first connection), and waiting for it would stop this host from ever reconnecting.
    func session(on connection: PostgresConnection) async throws {
        status.withLock { $0.progress = .now }
        // The first result wins; it may come before the waiter is there.
        let outcome = Mutex<(waiter: CheckedContinuation<Void, any Error>?, result: Result<Void, any Error>?)>(
            (nil, nil))
        let finish: @Sendable (Result<Void, any Error>) -> Void = { result in
            outcome.withLock { state in
                guard state.result == nil else { return }
                state.result = result
                state.waiter?.resume(with: result)
                state.waiter = nil
            }
        }
        let work = Task {
            do {
                try await self.runSession(on: connection)
                finish(.success(()))
            } catch {
                finish(.failure(error))
            }
        }
        let watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: ClusterReplicator.probeInterval)
                let last = self.status.withLock { $0.progress }
                if ContinuousClock.now - last > ClusterReplicator.stallLimit {
                    // Closes the channel at once, failing whatever waits on it; a graceful close would wait for
                    // an answer that may never come.
                    let closing: EventLoopFuture<Void> = connection.close()
                    _ = closing
                    finish(
                        .failure(ReplicationError("no answer from the database for \(ClusterReplicator.stallLimit)")))
                    return
                }
            }
        }
        defer {
            work.cancel()
            watchdog.cancel()
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                outcome.withLock { state in
                    if let result = state.result {
                        continuation.resume(with: result)
                    } else {
                        state.waiter = continuation
                    }
                }
            }
        } onCancel: {
            finish(.failure(CancellationError()))
        }
    }

    /// One connection's life: create the layout, `LISTEN`, settle pushes whose answer was lost, catch up, then
    /// push and apply as notifications and local changes arrive. Returns or throws when the connection is lost.
    func runSession(on connection: PostgresConnection) async throws {
        try await connection.withTransaction(logger: logger) { connection in
            for statement in ClusterSchema.statements(schema) {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        status.withLock { $0.wake = wake }
        defer { status.withLock { $0.wake = nil } }
        try await connection.listen(on: ClusterSchema.channel(schema)) { notifications in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in notifications { wake.yield() }
                    throw ReplicationError("the notification stream ended")
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: ClusterReplicator.probeInterval)
                        wake.yield()
                    }
                }
                group.addTask {
                    try await self.settleLostAnswers(connection)
                    try await self.catchUp(connection)
                    await self.setConnected(true, reason: "connected and caught up")
                    try await self.pushPending(connection)
                    for await _ in wakes {
                        try await self.catchUp(connection)
                        try await self.pushPending(connection)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    // MARK: - Pushing

    /// A push whose commit happened but whose answer was lost (the connection broke) is settled before the
    /// catch-up, so the feed never takes this host's own committed change for one still waiting.
    func settleLostAnswers(_ connection: PostgresConnection) async throws {
        let pending = journal.withState { $0.pending }
        guard !pending.isEmpty else { return }
        let stream = journal.withState { $0.stream }
        let rows = try await connection.query(
            "SELECT stream, last_push FROM \(unescaped: schema).hosts WHERE host = \(host)", logger: logger)
        var lastPush: Int64 = 0
        for try await (knownStream, last) in rows.decode((String, Int64).self) where knownStream == stream {
            lastPush = last
        }
        for change in pending where Int64(change.number) <= lastPush {
            try await push(change, on: connection)
        }
    }

    /// Pushes every waiting change, oldest first: one transaction each, in revision order.
    func pushPending(_ connection: PostgresConnection) async throws {
        while let next = journal.withState({ $0.pending.first }) {
            try await push(next, on: connection)
        }
    }

    func push(_ change: ReplicationJournal.Pending, on connection: PostgresConnection) async throws {
        // The push number must be durable before the database can hold it (see ReplicationJournal).
        journal.sync()
        let (stream, base) = journal.withState { ($0.stream, $0.applied[change.scene] ?? 0) }
        var origin: [UInt8] = []
        Wire.appendOrigin(change.origin, to: &origin)
        let content = change.bytes.map { ByteBuffer(bytes: $0) }
        let query: PostgresQuery = """
            SELECT r_seq, r_version, r_state FROM \(unescaped: schema).push(\(host), \(stream), \
            \(Int64(change.number)), \(change.scene.rawValue), \(content), \(change.format.rawValue), \
            \(String(decoding: origin, as: UTF8.self)), \(base), \(Int64(logKeep)), \
            \(ClusterSchema.channel(schema)))
            """
        let rows = try await connection.query(query, logger: logger)
        var answer: (Int64, Int64, String)? = nil
        for try await row in rows.decode((Int64, Int64, String).self) { answer = row }
        guard let (seq, version, state) = answer else { throw ReplicationError("the push function returned nothing") }
        journal.recordPushed(
            change.number, scene: change.scene, seq: state == "unchanged" ? 0 : seq, version: version,
            digest: change.bytes.map(SceneStore.digest) ?? 0)
        status.withLock {
            $0.progress = .now
            if state != "unchanged" { $0.pushed += 1 }
            $0.seen = max($0.seen, seq)
        }
    }

    // MARK: - Applying

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
            for row in batch { try await apply(row, advance: true) }
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
        for state in states { try await apply(state, advance: false) }
        journal.recordDone(seq: newest, scene: nil, version: nil)
    }

    /// Hands one database change to the engine, unless it is this host's own or older than this host's own latest
    /// committed change to that scene (which supersedes it).
    func apply(_ row: LogRow, advance: Bool) async throws {
        status.withLock { $0.seen = max($0.seen, row.seq) }
        let (stream, ownSeq, cursor) = journal.withState { state in
            (state.stream, row.scene.isEmpty ? 0 : SceneID(row.scene).flatMap { state.ownSeqs[$0] } ?? 0, state.cursor)
        }
        let done = advance ? row.seq : cursor
        guard let scene = SceneID(row.scene), shares(scene) else {
            journal.recordDone(seq: done, scene: nil, version: nil)
            return
        }
        if (row.host == host && row.stream == stream) || row.seq <= ownSeq {
            journal.recordDone(seq: done, scene: nil, version: nil)
            return
        }
        journal.recordReceived(seq: row.seq, scene: scene, digest: row.content.map(SceneStore.digest) ?? 0)
        let outcome = await engine.applyRemote(remoteChange(row, scene: scene))
        switch outcome {
        case .applied:
            status.withLock { $0.received += 1 }
            journal.recordDone(seq: done, scene: scene, version: row.version)
        case .unchanged:
            journal.recordDone(seq: done, scene: scene, version: row.version)
        case .superseded:
            journal.recordDone(seq: done, scene: nil, version: nil)
        case .refused(let reason):
            logger.warning(
                "a remote change could not be applied", metadata: ["scene": "\(scene)", "reason": "\(reason)"])
            journal.recordDone(seq: done, scene: nil, version: nil)
        case .stopping:
            throw CancellationError()
        }
    }

    func remoteChange(_ row: LogRow, scene: SceneID) -> RemoteChange {
        var origin = (try? JSONParser.parse(Array(row.origin.utf8))).map(Wire.decodeOrigin) ?? .file
        origin.source = .remote
        origin.host = row.host
        var conflict: Conflict? = nil
        if let bytes = row.conflictContent, let format = row.conflictFormat.flatMap(SceneFormat.init) {
            let codec = SceneFileCodec(policy: format == .codable ? .codable : .array)
            let path = (try? codec.decode(bytes))?.path ?? []
            var conflictOrigin =
                row.conflictOrigin.flatMap { try? JSONParser.parse(Array($0.utf8)) }.map(Wire.decodeOrigin) ?? .file
            if row.conflictHost != host {
                conflictOrigin.source = .remote
                conflictOrigin.host = row.conflictHost
            }
            conflict = Conflict(path: path, origin: conflictOrigin)
        }
        return RemoteChange(
            scene: scene, fileBytes: row.content, format: SceneFormat(rawValue: row.format), origin: origin,
            conflict: conflict)
    }
}
