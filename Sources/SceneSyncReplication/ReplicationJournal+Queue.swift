import NIOCore
import SceneSyncCore

/// The bounded queue between recording a line (in the engine's turn) and the writer that puts it in the file.
extension ReplicationJournal {
    /// The lines recorded but not in the file yet, in the order they were recorded.
    struct Queue: Sendable {
        var bytes: [UInt8] = []
        var lines = 0
        /// Where each queued `local` line is in `bytes`: once written, its change learns where the line is in the
        /// file and lets go of its content.
        var locals: [QueuedLocal] = []
    }

    struct QueuedLocal: Sendable {
        var number: UInt64
        var range: Range<Int>
    }

    /// Queues one record's lines (`count` of them) for the writer, under the lock of the call that records; returns
    /// whether to wake the writer. While the journal lacks lines (``Guarded/failed``) nothing is queued: the
    /// rewrite that ends it writes the state, which holds this record too. A record that would take a non-empty
    /// queue past ``queueLimit`` drops the queue and fails the journal; the writer, woken, rewrites the file.
    func enqueue(_ lines: [UInt8], count: Int = 1, local: UInt64? = nil, to guarded: inout Guarded) -> Bool {
        guarded.recorded += 1
        guard !guarded.failed else { return false }
        let start = guarded.queue.bytes.count
        if start > 0, start + lines.count > queueLimit {
            guarded.queue = Queue()
            guarded.failed = true
            guarded.overflowed = true
            return true
        }
        if let local { guarded.queue.locals.append(QueuedLocal(number: local, range: start..<(start + lines.count))) }
        guarded.queue.bytes.append(contentsOf: lines)
        guarded.queue.lines += count
        return true
    }

    /// Whether the file lacks lines the state has (a failed write, a dropped queue): nothing is pushed until the
    /// writer has rewritten it. Never blocks.
    var lacksLines: Bool { guarded.withLock { $0.failed } }

    /// The oldest pending changes, up to `limit`, whose `local` line is in the file: only those may be pushed.
    /// A number the database holds but the file lacks could be handed out again after a crash, and the database
    /// would drop that later change as a duplicate.
    func writtenPending(limit: Int) -> [Pending] {
        guarded.withLock { Array($0.state.pending.prefix(limit).prefix { $0.line != nil }) }
    }
}

extension ReplicationJournal.Guarded {
    /// The file lacks lines from now on (a write, a flush or a rewrite failed): the queue is dropped, since only
    /// the rewrite can put the lines back. Nothing is settled: the caller lets the waiters go, told the lines are
    /// not in the file (``takeReadyWaiters()``).
    mutating func fail() {
        failed = true
        queue = ReplicationJournal.Queue()
    }
}
