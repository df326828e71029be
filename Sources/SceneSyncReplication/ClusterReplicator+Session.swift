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
    /// would otherwise hold the host alone and silent. Test builds under test hooks take
    /// `SCENESYNC_TEST_CLUSTER_STALL_MS`.
    static let stallLimit: Duration = {
        #if SCENESYNC_TEST_HOOKS
        if getenv("SCENESYNC_TEST_HOOKS").map({ String(cString: $0) }) == "1",
            let value = getenv("SCENESYNC_TEST_CLUSTER_STALL_MS").flatMap({ Int(String(cString: $0)) })
        {
            return .milliseconds(value)
        }
        #endif
        return .seconds(15)
    }()

    /// Runs ``runSession(on:)`` under a watchdog that closes the connection when the session stalls.
    ///
    /// The session runs as its own task, and a stall returns without waiting for it: a query on a connection that
    /// closed while it was being set up can wait forever in the client (seen with `pg_ctl stop -m immediate` during
    /// a host's first connection), and waiting for it would stop this host from ever reconnecting. Such a task is
    /// cancelled and kept in ``Status/Sessions/abandoned`` until it ends: counted in `stats.cluster`, logged when it
    /// is left and when it ends, and named again at shutdown if it never did.
    func session(on connection: PostgresConnection) async throws {
        let id = status.withLock { status -> UInt64 in
            status.progress = .now
            status.sessions.started += 1
            status.sessions.working.insert(status.sessions.started)
            return status.sessions.started
        }
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
        // On the engine's loop, as every task of the daemon: an unstructured task does not inherit the caller's
        // executor preference, and on the global executor each step of the session (a notification, the journal
        // line, the engine's apply, the push) was a thread hand-off to the loop and back.
        let loop = engine.loop.taskExecutor
        let work = Task(executorPreference: loop) {
            do {
                try await self.runSession(on: connection)
                finish(.success(()))
            } catch {
                finish(.failure(error))
            }
            let wasAbandoned = self.status.withLock { status in
                status.sessions.working.remove(id)
                return status.sessions.abandoned.removeValue(forKey: id) != nil
            }
            if wasAbandoned { self.logger.notice("an abandoned database session ended at last") }
        }
        let watchdog = Task(executorPreference: loop) {
            while !Task.isCancelled {
                try? await Task.sleep(for: ClusterReplicator.probeInterval)  // cancelled: the loop ends at its check
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
            let abandoned = status.withLock { status -> Int? in
                guard status.sessions.working.contains(id) else { return nil }
                status.sessions.abandoned[id] = work
                return status.sessions.abandoned.count
            }
            if let abandoned {
                logger.warning(
                    "a database session did not end when its connection was closed; it is cancelled and left to end",
                    metadata: ["abandoned": "\(abandoned)"])
            }
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
        await ReplicationTestHooks.wait(whileExists: testHooks.hangSession, on: engine.blockingIO)
        // As a stuck call that finally returns would fail on its closed connection.
        try Task.checkCancellation()
        try await connection.withTransaction(logger: logger) { connection in
            for statement in ClusterSchema.statements(schema) {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        status.withLock { $0.feed = Status.Feed(wake: wake) }
        defer { status.withLock { $0.feed.wake = nil } }
        try await connection.listen(on: ClusterSchema.channel(schema)) { notifications in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await notification in notifications {
                        // The payload is the newest committed sequence, then maybe the batch's rows; anything else
                        // (never sent by this version) is read as "look".
                        let (seq, rows) = ClusterReplicator.decodeNotification(notification.payload)
                        self.status.withLock { status in
                            if let seq {
                                status.feed.notified = max(status.feed.notified, seq)
                                if status.feed.notifiedRows.count < ClusterReplicator.batchSize {
                                    status.feed.notifiedRows.append(contentsOf: rows)
                                }
                            } else {
                                status.feed.probeDue = true
                            }
                        }
                        wake.yield()
                    }
                    throw ReplicationError("the notification stream ended")
                }
                group.addTask {
                    while true {
                        try await Task.sleep(for: ClusterReplicator.probeInterval)
                        self.status.withLock { $0.feed.probeDue = true }
                        wake.yield()
                    }
                }
                group.addTask {
                    try await self.settleLostAnswers(connection)
                    try await self.settleAdopted(connection)
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
                status.feed.probeDue = false
                status.feed.notifiedRows = []
            }
            return (status.feed.notified, status.feed.probeDue, status.feed.notifiedRows)
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
        // Rows that do not decode are not lost: without them the feed reads the same rows from the log.
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
}
