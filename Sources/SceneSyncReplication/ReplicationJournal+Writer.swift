import SceneSyncDaemon
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The journal's one writer: what a turn writes, and the rewrite that ends a failure.
///
/// Every call here blocks on the disk. A small turn (``nextTurnIsSmall()``) runs where the replicator's writer runs,
/// on the engine's loop, as the engine writes a small scene file there: a write of a few KiB to the page cache costs
/// less than the two thread hand-offs around it, which were most of a change's way to the database. Anything bigger
/// runs on the daemon's blocking executor, never on the cooperative pool. They hold the file's lock (``file``) while they work, so a second caller waits
/// for the first instead of interleaving its lines; the lock the engine's turn takes (``guarded``) is held only
/// to take the queue and to note what was written.
extension ReplicationJournal {
    /// What one turn of the writer did.
    struct WriteOutcome: Sendable, Equatable {
        /// Whether the file holds every line of the state but those queued since (false while it lacks some).
        var written: Bool
        /// Whether `local` lines reached the file: changes the replicator could not push before may go now.
        var newlyPushable: Bool
        /// Whether the queue had been dropped for being full since the last turn.
        var overflowed: Bool
    }

    /// How many lines the file may grow to before it is rewritten while the daemon runs.
    static let compactionLines = 100_000

    /// The most bytes a turn may append, or read back, on the caller's thread (see ``nextTurnIsSmall()``).
    static let inlineBytes = 64 * 1024

    /// Whether the next turn only appends a few queued lines: no rewrite (no failed write or dropped queue, no
    /// compaction due), at most ``inlineBytes``, to an open file.
    func nextTurnIsSmall() -> Bool {
        guard damage == nil else { return true }
        return file.withLock { file in
            guarded.withLock { guarded in
                !guarded.failed && file.fd >= 0 && guarded.queue.bytes.count <= Self.inlineBytes
                    && file.lines + guarded.queue.lines <= Self.compactionLines
            }
        }
    }

    /// One turn of the writer: everything queued, with one `write(2)`, in the order it was recorded; or, when the
    /// file lacks lines (a failed write, a dropped queue), the whole state, rewritten. Once nothing is pending on a
    /// long run, the state alone replaces the file, which stays bounded.
    @discardableResult
    func writeQueued() -> WriteOutcome {
        guard damage == nil else { return WriteOutcome(written: false, newlyPushable: false, overflowed: false) }
        let (outcome, ready) = file.withLock {
            file -> (WriteOutcome, [(CheckedContinuation<Settlement, Never>, Settlement)]) in
            let (queue, ticket, failed, overflowed) = guarded.withLock { guarded in
                defer {
                    guarded.queue = Queue()
                    guarded.overflowed = false
                }
                return (guarded.queue, guarded.recorded, guarded.failed, guarded.overflowed)
            }
            var newlyPushable = false
            if failed {
                newlyPushable = rewrite(&file)
            } else {
                newlyPushable = append(queue, settling: ticket, to: &file)
            }
            if file.lines > ReplicationJournal.compactionLines,
                guarded.withLock({ !$0.failed && $0.state.pending.isEmpty })
            {
                rewrite(&file)
            }
            return guarded.withLock { guarded in
                (
                    WriteOutcome(written: !guarded.failed, newlyPushable: newlyPushable, overflowed: overflowed),
                    guarded.takeReadyWaiters()
                )
            }
        }
        for (waiter, settlement) in ready { waiter.resume(returning: settlement) }
        return outcome
    }

    /// Whether the file holds every line of the state once what is queued is written; when a write failed (or
    /// the queue was dropped), it tries to rewrite the file first. The replicator pushes nothing while it does
    /// not: a push number the file lacks could be handed out again after a restart, and the database would take
    /// that later change for a duplicate and drop it. A damaged file is never rewritten.
    func isWritten() -> Bool {
        writeQueued().written
    }

    /// Writes `queue` at the end of the file and tells each of its `local` lines' changes where the line is.
    /// After a failed write (a full disk) the file is left alone until it is rewritten: a torn line followed by
    /// more lines would take a good line with it. Returns whether `local` lines were written.
    private func append(_ queue: Queue, settling ticket: UInt64, to file: inout File) -> Bool {
        guard !queue.bytes.isEmpty else {
            guarded.withLock { $0.settled = max($0.settled, ticket) }
            return false
        }
        guard FileSystem.writeAll(file.fd, queue.bytes) else {
            guarded.withLock { $0.fail() }
            return false
        }
        let base = file.size
        file.size += Int64(queue.bytes.count)
        file.lines += queue.lines
        guarded.withLock { guarded in
            for local in queue.locals {
                // Gone only if answered already, which needs its line in the file: never, but harmless.
                guard let index = guarded.state.pendingIndex(of: local.number) else { continue }
                guarded.state.pending[index].line =
                    (base + Int64(local.range.lowerBound))..<(base + Int64(local.range.upperBound))
                guarded.state.pending[index].bytes = nil
            }
            guarded.settled = max(guarded.settled, ticket)
        }
        return !queue.locals.isEmpty
    }

    /// Replaces the file with the state alone, durably, and writes to the new file from then on. The state is
    /// copied and the queue emptied at one moment, so the new file holds every record up to then and the lines
    /// recorded meanwhile go after it. Any failure (the rename may have happened or not) leaves the journal
    /// failed, to be rewritten again. Returns whether it succeeded.
    @discardableResult
    private func rewrite(_ file: inout File) -> Bool {
        let (copy, ticket) = guarded.withLock { guarded in
            guarded.queue = Queue()
            guarded.failed = false
            return (guarded.state, guarded.recorded)
        }
        var whole = copy
        let encoded: (bytes: [UInt8], lines: [Range<Int64>])
        do throws(ReplicationError) {
            // The contents only the old file holds go into the new one; held in memory only for the rewrite.
            let contents = try Self.readContents(of: whole.pending, from: file.fd)
            for (index, content) in zip(whole.pending.indices, contents) where !whole.pending[index].deleted {
                whole.pending[index].bytes = content
            }
            encoded = ReplicationJournal.encode(whole)
            try ReplicationJournal.replace(path, with: encoded.bytes)
        } catch {
            guarded.withLock { $0.fail() }
            return false
        }
        if file.fd >= 0 { close(file.fd) }
        file.fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        file.lines = 0
        file.size = Int64(encoded.bytes.count)
        file.synced = file.size  // written durably
        let reopened = file.fd >= 0
        guarded.withLock { guarded in
            // The old file is gone: each change learns where its line is in the new one or, with no descriptor
            // to read it back from, keeps its content in memory.
            for (change, line) in zip(whole.pending, encoded.lines) {
                guard let index = guarded.state.pendingIndex(of: change.number) else { continue }
                guarded.state.pending[index].line = reopened ? line : nil
                guarded.state.pending[index].bytes = reopened ? nil : change.bytes
            }
            if reopened {
                guarded.settled = max(guarded.settled, ticket)
            } else {
                guarded.fail()
            }
        }
        return reopened
    }
}
