/// The tickets that tell a waiter (the engine's snapshot, the feed before it writes remote changes) when the
/// lines of the records made before it are in the file.
extension ReplicationJournal {
    /// A writer loop runs from now on: ``waitUntilWritten()`` waits for it.
    func beginWriting() {
        guarded.withLock { $0.writerRunning = true }
    }

    /// Ends the writer loop's watch, unless lines were recorded since its last turn: then `false`, and the loop
    /// takes one more turn, so no waiter is left behind.
    func finishWriting() -> Bool {
        let ready = guarded.withLock { guarded -> [CheckedContinuation<Bool, Never>]? in
            guard guarded.settled >= guarded.recorded else { return nil }
            guarded.writerRunning = false
            return guarded.takeSettledWaiters()
        }
        guard let ready else { return false }
        for waiter in ready { waiter.resume(returning: true) }
        return true
    }

    /// Waits until the lines of every record made before the call are in the file, or were given up with a
    /// failed write (which the log tells, and which the rewrite ends): then `true`. `false` at once when no writer
    /// loop runs (before the replicator started, after it stopped): the caller then takes a turn itself
    /// (``writeQueued()``). A record made while the file lacks lines is waited for until the rewrite.
    func waitUntilWritten() async -> Bool {
        if guarded.withLock({ $0.settled >= $0.recorded }) { return true }
        wake.yield()
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let now = guarded.withLock { guarded -> Bool? in
                if guarded.settled >= guarded.recorded { return true }
                guard guarded.writerRunning else { return false }
                guarded.waiters.append((guarded.recorded, continuation))
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}

extension ReplicationJournal.Guarded {
    /// Removes and returns the waiters whose records are settled.
    mutating func takeSettledWaiters() -> [CheckedContinuation<Bool, Never>] {
        guard waiters.contains(where: { $0.ticket <= settled }) else { return [] }
        let ready = waiters.filter { $0.ticket <= settled }.map(\.continuation)
        waiters.removeAll { $0.ticket <= settled }
        return ready
    }
}
