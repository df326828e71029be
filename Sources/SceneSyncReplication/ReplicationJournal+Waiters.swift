/// The tickets that tell a waiter (the engine's snapshot, the feed before it writes remote changes) when the
/// lines of the records made before it are in the file, or that they are not.
extension ReplicationJournal {
    /// What a wait for the writer found (``waitUntilWritten()``).
    enum Settlement: Sendable, Equatable {
        /// The lines of every record made before the wait are in the file.
        case written
        /// They are not: a write or a flush failed (or the queue was dropped) and the rewrite that puts them back
        /// failed too, or has not run yet at shutdown. The state still holds them, and the next rewrite writes
        /// them; only a crash before it loses their lines.
        case lacking
        /// No writer loop runs (before the replicator started, after it stopped): the caller takes a turn itself.
        case noWriter
    }

    /// A writer loop runs from now on: ``waitUntilWritten()`` waits for it.
    func beginWriting() {
        guarded.withLock { $0.writerRunning = true }
    }

    /// Ends the writer loop's watch, unless lines were recorded since its last turn and the file can take them:
    /// then `false`, and the loop takes one more turn, so no waiter is left behind. A journal that lacks lines
    /// after that turn's rewrite lets its waiters go with ``Settlement/lacking``.
    func finishWriting() -> Bool {
        let ready = guarded.withLock { guarded -> [(CheckedContinuation<Settlement, Never>, Settlement)]? in
            guard guarded.settled >= guarded.recorded || guarded.failed else { return nil }
            guarded.writerRunning = false
            return guarded.takeReadyWaiters()
        }
        guard let ready else { return false }
        for (waiter, settlement) in ready { waiter.resume(returning: settlement) }
        return true
    }

    /// Waits until the lines of every record made before the call are in the file (``Settlement/written``), or
    /// the writer found it cannot put them there now (``Settlement/lacking``). The writer is woken once the waiter
    /// is registered: a record made while the file lacks lines queues nothing and wakes nobody, and the waiter
    /// must not sleep until the next flush.
    func waitUntilWritten() async -> Settlement {
        if guarded.withLock({ $0.settled >= $0.recorded }) { return .written }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Settlement, Never>) in
            let now = guarded.withLock { guarded -> Settlement? in
                if guarded.settled >= guarded.recorded { return .written }
                guard guarded.writerRunning else { return .noWriter }
                guarded.waiters.append((guarded.recorded, continuation))
                return nil
            }
            if let now {
                continuation.resume(returning: now)
            } else {
                wake.yield()
            }
        }
    }
}

extension ReplicationJournal.Guarded {
    /// Removes and returns the waiters whose records are settled (``ReplicationJournal/Settlement/written``) and,
    /// while the file lacks lines, every other one (``ReplicationJournal/Settlement/lacking``): only a rewrite can
    /// put their lines back, and it may wait for a disk with space.
    mutating func takeReadyWaiters() -> [(
        CheckedContinuation<ReplicationJournal.Settlement, Never>, ReplicationJournal.Settlement
    )] {
        let settled = settled
        let failed = failed
        guard waiters.contains(where: { $0.ticket <= settled || failed }) else { return [] }
        let ready = waiters.filter { $0.ticket <= settled || failed }.map { waiter in
            (waiter.continuation, waiter.ticket <= settled ? ReplicationJournal.Settlement.written : .lacking)
        }
        waiters.removeAll { $0.ticket <= settled || failed }
        return ready
    }
}
