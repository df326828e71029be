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
    /// The most changes one push transaction carries: a bound on its size and on how long it holds the database's
    /// sequence lock (a few milliseconds at most).
    static let pushBatchLimit = 256
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
        status.withLock {
            $0.wake = wake
            $0.notified = 0
            $0.probeDue = false
            $0.notifiedRows = []
        }
        defer { status.withLock { $0.wake = nil } }
        try await connection.listen(on: ClusterSchema.channel(schema)) { notifications in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await notification in notifications {
                        // The payload is the newest committed sequence, then maybe the batch's rows; anything else
                        // (never sent by this version) is read as "look".
                        let (seq, rows) = ClusterReplicator.decodeNotification(notification.payload)
                        self.status.withLock { status in
                            if let seq {
                                status.notified = max(status.notified, seq)
                                if status.notifiedRows.count < ClusterReplicator.batchSize {
                                    status.notifiedRows.append(contentsOf: rows)
                                }
                            } else {
                                status.probeDue = true
                            }
                        }
                        wake.yield()
                    }
                    throw ReplicationError("the notification stream ended")
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: ClusterReplicator.probeInterval)
                        self.status.withLock { $0.probeDue = true }
                        wake.yield()
                    }
                }
                group.addTask {
                    try await self.settleLostAnswers(connection)
                    try await self.catchUp(connection)
                    await self.setConnected(true, reason: "connected and caught up")
                    try await self.pushPending(connection)
                    for await _ in wakes {
                        try await self.feed(connection)
                        try await self.pushPending(connection)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Applies what the database committed since the cursor. The log is read for the periodic probe (which also
    /// finds a connection that died without a word), and for a notification of a sequence this host has not
    /// applied, did not commit itself, and whose rows did not come with the notifications. The notifications of
    /// this host's own pushes, the most common ones on a busy host, cost no query; nor do small batches of others.
    func feed(_ connection: PostgresConnection) async throws {
        let (notified, probe, rows) = status.withLock { status in
            defer {
                status.probeDue = false
                status.notifiedRows = []
            }
            return (status.notified, status.probeDue, status.notifiedRows)
        }
        if probe { return try await catchUp(connection) }
        guard journal.needsCatchUp(to: notified) else {
            status.withLock { $0.seen = max($0.seen, notified) }
            return
        }
        // Rows from the notifications, when they are every change from the cursor on up to the newest notified.
        let cursor = journal.withState { $0.cursor }
        let fresh = rows.filter { $0.seq > cursor }
        let complete =
            fresh.first?.seq == cursor + 1 && (fresh.last?.seq ?? 0) >= notified
            && zip(fresh, fresh.dropFirst()).allSatisfy { $0.seq + 1 == $1.seq }
        guard complete else { return try await catchUp(connection) }
        status.withLock { $0.progress = .now }
        try await apply(fresh, advance: true)
    }

    /// `"<seq>"` or `"<seq> {"h": host, "t": stream, "r": [row, …]}"` (see `push_batch`); rows that do not decode are
    /// left out, so the feed reads the log instead.
    static func decodeNotification(_ payload: String) -> (Int64?, [LogRow]) {
        let parts = payload.split(separator: " ", maxSplits: 1)
        guard let first = parts.first, let seq = Int64(first) else { return (nil, []) }
        guard parts.count == 2, let json = try? JSONParser.parse(Array(parts[1].utf8)),
            let host = json["h"]?.stringValue, let stream = json["t"]?.stringValue,
            let entries = json["r"]?.arrayValue
        else { return (seq, []) }
        var rows: [LogRow] = []
        for entry in entries {
            func bytes(_ key: String) -> [UInt8]?? {
                guard let value = entry[key] else { return .none }
                if value == .null { return .some(nil) }
                guard let text = value.stringValue, let decoded = Hex.decode(text) else { return .none }
                return .some(decoded)
            }
            func text(_ key: String) -> String? { entry[key]?.stringValue }
            guard let rowSeq = entry["q"]?.int64Value, let scene = text("s"), let version = entry["v"]?.int64Value,
                let content = bytes("c"), let format = text("f"), let origin = text("o"),
                let conflictContent = bytes("cc")
            else { return (seq, []) }
            rows.append(
                LogRow(
                    seq: rowSeq, scene: scene, version: version, content: content, format: format, host: host,
                    stream: stream, origin: origin, conflictContent: conflictContent, conflictFormat: text("cf"),
                    conflictHost: text("ch"), conflictOrigin: text("co")))
        }
        return (seq, rows)
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
        // Pending changes are in push order: the committed ones are a prefix.
        let committed = pending.prefix { Int64($0.number) <= lastPush }
        var start = committed.startIndex
        while start < committed.endIndex {
            let end = min(start + ClusterReplicator.pushBatchLimit, committed.endIndex)
            try await push(Array(committed[start..<end]), on: connection)
            start = end
        }
    }

    /// Pushes every waiting change, oldest first, in revision order: up to ``pushBatchLimit`` per transaction.
    func pushPending(_ connection: PostgresConnection) async throws {
        while true {
            let batch = journal.withState { Array($0.pending.prefix(ClusterReplicator.pushBatchLimit)) }
            guard !batch.isEmpty else { return }
            try await push(batch, on: connection)
        }
    }

    /// One `push_batch` call: one journal `fdatasync`, one transaction, one round trip, one `NOTIFY`.
    func push(_ batch: [ReplicationJournal.Pending], on connection: PostgresConnection) async throws {
        // The push numbers must be durable before the database can hold them (see ReplicationJournal).
        journal.sync()
        let (stream, bases) = journal.withState { state in
            (state.stream, batch.map { state.applied[$0.scene] ?? 0 })
        }
        var origins: [String] = []
        origins.reserveCapacity(batch.count)
        for change in batch {
            var origin: [UInt8] = []
            Wire.appendOrigin(change.origin, to: &origin)
            origins.append(String(decoding: origin, as: UTF8.self))
        }
        let numbers = batch.map { Int64($0.number) }
        let scenes = batch.map(\.scene.rawValue)
        let deleted = batch.map { $0.bytes == nil }
        let contents = batch.map { ByteBuffer(bytes: $0.bytes ?? []) }
        let formats = batch.map(\.format.rawValue)
        let query: PostgresQuery = """
            SELECT r_push, r_seq, r_version, r_state FROM \(unescaped: schema).push_batch(\(host), \(stream), \
            \(numbers), \(scenes), \(deleted), \(contents), \(formats), \(origins), \(bases), \(Int64(logKeep)), \
            \(ClusterSchema.channel(schema)))
            """
        let rows = try await connection.query(query, logger: logger)
        var answers: [ReplicationJournal.PushAnswer] = []
        answers.reserveCapacity(batch.count)
        var committed = 0
        var newest: Int64 = 0
        var index = 0
        for try await (number, seq, version, state) in rows.decode((Int64, Int64, Int64, String).self) {
            guard index < batch.count, Int64(batch[index].number) == number else {
                throw ReplicationError("the push function answered push \(number) out of order")
            }
            let change = batch[index]
            index += 1
            // A duplicate is a commit whose answer was lost: counted now.
            if state != "unchanged" { committed += 1 }
            newest = max(newest, seq)
            answers.append(
                ReplicationJournal.PushAnswer(
                    number: change.number, scene: change.scene, seq: state == "unchanged" ? 0 : seq,
                    version: version, digest: change.bytes.map(SceneStore.digest) ?? 0))
        }
        guard index == batch.count else {
            throw ReplicationError("the push function answered \(index) of \(batch.count) pushes")
        }
        journal.recordPushed(answers)
        status.withLock {
            $0.progress = .now
            $0.pushed += committed
            $0.seen = max($0.seen, newest)
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
    /// received before the engine sees it, and done (the cursor moved to it, with `advance`) in order after.
    func apply(_ rows: [LogRow], advance: Bool) async throws {
        guard let newest = rows.map(\.seq).max() else { return }
        status.withLock { $0.seen = max($0.seen, newest) }
        let (stream, ownSeqs, cursor) = journal.withState { ($0.stream, $0.ownSeqs, $0.cursor) }
        /// Per row, the scene it changes when the engine gets it.
        var targets: [SceneID?] = []
        var received: [ReplicationJournal.Received] = []
        var changes: [RemoteChange] = []
        for row in rows {
            guard let scene = SceneID(row.scene), shares(scene),
                !(row.host == host && row.stream == stream), row.seq > ownSeqs[scene] ?? 0
            else {
                targets.append(nil)
                continue
            }
            targets.append(scene)
            received.append(.init(seq: row.seq, scene: scene, digest: row.content.map(SceneStore.digest) ?? 0))
            changes.append(remoteChange(row, scene: scene))
        }
        journal.recordReceived(received)
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
            guard let scene = target else {
                done.append(.init(seq: seq))
                continue
            }
            switch next.next() ?? .stopping {
            case .applied:
                applied += 1
                done.append(.init(seq: seq, scene: scene, version: row.version))
            case .unchanged:
                done.append(.init(seq: seq, scene: scene, version: row.version))
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
