import Logging
import SceneSyncDaemon
import ServiceLifecycle

/// The replicator's side of the journal's health: refusing a damaged one, and flushing writes in the background.
extension ClusterReplicator {
    /// A damaged journal stops replication until the daemon restarts: it cannot say which changes are pushed, so
    /// pushing could repeat or skip one, and applying would move a cursor it cannot record. The host works alone,
    /// its subscribers are told, and the file is left for the operator.
    func refuseToReplicate(_ damage: ReplicationJournal.Damage) async {
        logger.error(
            "the cluster journal is damaged; nothing is pushed, recorded or applied until it is repaired or removed",
            metadata: [
                "journal": "\(journal.path)", "damage": "\(damage)",
                "then": """
                repair it and restart the daemon, or remove cluster-journal and cluster-stream and restart: that \
                starts a new stream and loses the changes not pushed
                """,
            ])
        // The database may well be up: the message names the journal, where the operator must look.
        engine.setClusterUnavailable(
            message: """
                replication is stopped: the cluster journal is damaged (\(damage)) at \(journal.path); this host \
                works alone until it is repaired or removed and the daemon restarted
                """)
        // Throws only when cancelled: the daemon is stopping either way.
        try? await gracefulShutdown()
    }

    /// How often the journal's writes are flushed to the disk in the background (``syncJournal()``).
    static let journalSyncInterval = Duration.seconds(1)

    /// Flushes the journal's writes every ``journalSyncInterval``, off the push path, on the blocking executor, so
    /// a write-back error stops the pushes until the journal is rewritten (see
    /// ``ReplicationJournal/syncAppends(failing:)``). ``ReplicationTestHooks/failJournalSync`` plays that error.
    func syncJournal() async {
        var failing = false
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: ClusterReplicator.journalSyncInterval)
            } catch {
                return  // cancelled: the daemon is stopping
            }
            let journal = journal
            let fault = testHooks.failJournalSync
            let synced = await engine.blockingIO.run {
                journal.syncAppends(failing: ReplicationTestHooks.exists(fault))
            }
            // A journal that misses lines (this flush failed, or a write did) is rewritten by the writer, woken
            // here too, not only before a push: during an outage there is no push, and its changes must reach the
            // file.
            if journal.lacksLines { journal.wakeWriter() }
            if !synced, !failing {
                logger.error(
                    "cannot flush the cluster journal to disk; nothing is pushed until it is rewritten whole",
                    metadata: ["journal": "\(journal.path)"])
            }
            failing = !synced
        }
    }
}
