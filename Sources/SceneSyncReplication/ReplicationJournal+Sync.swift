import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The background flush of the journal's writes, which finds a disk that fails to write back what it took.
///
/// A blocking call: the replicator runs it on the daemon's blocking executor, beside the writer's turns.
extension ReplicationJournal {
    /// Flushes what was written to the disk (`fdatasync`, on a duplicate of the descriptor so writes go on), so
    /// that a disk which fails to write back pages already written (an I/O error, not a full disk) is found. Such
    /// a failure is treated as a failed write: nothing is pushed until the file is rewritten whole and synced.
    /// `failing` plays that error, for tests. Returns `false` when the sync failed.
    @discardableResult
    func syncAppends(failing: Bool = false) -> Bool {
        let (fd, size) = file.withLock { file -> (Int32?, Int64) in
            // A failed file is rewritten, and a rewrite syncs, before anything is pushed again.
            guard !lacksLines, file.fd >= 0, file.synced < file.size || failing else { return (nil, 0) }
            return (dup(file.fd), file.size)
        }
        guard let fd else { return true }
        // Out of descriptors: nothing is known about the disk, so only this sync failed; the next one tries again.
        guard fd >= 0 else { return false }
        defer { close(fd) }
        guard !failing, fdatasync(fd) == 0 else {
            let ready = guarded.withLock { guarded in
                guarded.fail()
                return guarded.takeReadyWaiters()
            }
            for (waiter, settlement) in ready { waiter.resume(returning: settlement) }
            return false
        }
        file.withLock { $0.synced = max($0.synced, size) }
        return true
    }
}
