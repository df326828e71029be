import Logging
import SceneSyncDaemon
import Synchronization

/// The cluster journal's one writer, a child task of ``ClusterReplicator/run()``.
extension ClusterReplicator {
    /// Writes what the engine and the sessions queue in the journal, a turn each time it is woken, each turn one
    /// `write(2)` for everything queued, on the daemon's blocking executor: recording never waits for the disk,
    /// and a burst of changes costs one system call. Once a turn put `local` lines in the file it wakes the
    /// session, since only those changes may be pushed (``ReplicationJournal/writtenPending(limit:)``). At
    /// shutdown it writes everything queued before it ends, so ``run()`` returns with the file complete.
    func writeJournal() async {
        journal.beginWriting()
        // Ends when the task is cancelled: the daemon is stopping.
        for await _ in journal.wakes {
            await writeJournalTurn()
        }
        repeat {
            await writeJournalTurn()
        } while !journal.finishWriting()
    }

    /// One turn of the writer, and what the log and the session learn from it.
    func writeJournalTurn() async {
        await ReplicationTestHooks.wait(whileExists: testHooks.holdJournalWriter, on: engine.blockingIO)
        let journal = journal
        // A few lines are appended right here, on the loop; a rewrite or a burst goes to the blocking executor.
        let outcome =
            journal.nextTurnIsSmall() ? journal.writeQueued() : await engine.blockingIO.run { journal.writeQueued() }
        if outcome.overflowed {
            logger.warning(
                """
                the cluster journal's queue was full (the disk is slower than the changes); the file is rewritten \
                whole from the state, and nothing is lost
                """,
                metadata: ["journal": "\(journal.path)", "bound": "\(journal.queueLimit) bytes"])
        }
        noteJournal(written: outcome.written)
        if outcome.newlyPushable { status.withLock { $0.feed.wake }?.yield() }
    }
}
