import Logging
import PostgresNIO
import SceneSyncCore
import SceneSyncDaemon
import Synchronization

/// Pushing this host's changes (§9): in revision order, in batches, idempotent by stream and push number.
extension ClusterReplicator {
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
        let committed = Array(pending.prefix { Int64($0.number) <= lastPush })
        var start = 0
        while start < committed.count {
            let end = min(start + ClusterReplicator.pushBatchLimit, committed.count)
            try await push(Array(committed[start..<end]), on: connection)
            start = end
        }
    }

    /// Pushes every waiting change whose line is in the journal's file, oldest first, in revision order: up to
    /// ``pushBatchLimit`` per transaction. A batch ends before the first change still queued for the writer, which
    /// wakes the session once it has written it. Nothing while the journal lacks lines (see
    /// ``journalAllowsPushing()``); the writer's rewrite wakes the session again.
    func pushPending(_ connection: PostgresConnection) async throws {
        while journalAllowsPushing() {
            let batch = journal.writtenPending(limit: ClusterReplicator.pushBatchLimit)
            guard !batch.isEmpty else { return }
            try await push(batch, on: connection)
        }
    }

    /// Whether the journal holds every push number handed out, so that pushing may go on; when it does not, the
    /// writer is woken to rewrite it (``ReplicationJournal/isWritten()``). Never waits for the disk: the writer's
    /// turns tell the log once when writing stops and once when it goes on; receiving goes on meanwhile.
    func journalAllowsPushing() -> Bool {
        guard journal.lacksLines else { return true }
        journal.wakeWriter()
        return false
    }

    /// Logs a change of whether the journal holds everything, and returns it.
    @discardableResult
    func noteJournal(written: Bool) -> Bool {
        let changed = status.withLock { status -> Bool in
            defer { status.journalFailed = !written }
            return status.journalFailed == written
        }
        if changed, written {
            logger.notice(
                "the cluster journal is written again; pushing goes on", metadata: ["journal": "\(journal.path)"])
        } else if changed {
            logger.error(
                "cannot write the cluster journal; this host's changes are kept and pushed once it can",
                metadata: ["journal": "\(journal.path)", "pending": "\(journal.withState { $0.pending.count })"])
        }
        return written
    }

    /// One `push_batch` call: one transaction, one round trip, one `NOTIFY`. Every change of `batch` has its line in
    /// the journal's file; the file is not synced first: a number a power loss takes from it is never handed out
    /// again (see ``ReplicationJournal``).
    func push(_ batch: [ReplicationJournal.Pending], on connection: PostgresConnection) async throws {
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
        let deleted = batch.map(\.deleted)
        let contents = try await contents(of: batch)
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
                    version: version, digest: change.digest))
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

    /// The contents of pending changes (empty for a deletion), read back from the journal's file: the contents of a
    /// backlog live on disk, not in memory. A few KiB are read right here, on the loop; more on the blocking
    /// executor.
    func contents(of batch: [ReplicationJournal.Pending]) async throws -> [ByteBuffer] {
        let journal = journal
        var bytes = 0
        for change in batch {
            if let line = change.line {
                bytes += Int(line.upperBound - line.lowerBound)
            } else {
                bytes += change.bytes?.count ?? 0
            }
        }
        if bytes <= ReplicationJournal.inlineBytes {
            return try journal.contents(of: batch).map { ByteBuffer(bytes: $0 ?? []) }
        }
        let read = await engine.blockingIO.run { () -> Result<[ByteBuffer], ReplicationError> in
            do throws(ReplicationError) {
                return .success(try journal.contents(of: batch).map { ByteBuffer(bytes: $0 ?? []) })
            } catch {
                return .failure(error)
            }
        }
        return try read.get()
    }
}
