import Logging
import SceneSyncDaemon

/// A change in the database under this host's name that this host did not push (§9: a host never applies its own
/// pushes to itself as remote changes).
extension ClusterReplicator {
    /// Thrown out of a session when the database holds such a change: replication stops for good (until a restart),
    /// as for a damaged journal.
    struct OwnRowsUnaccounted: Error {
        var damage: ReplicationJournal.Damage
    }

    /// Refuses `rows` when one of them carries this host's name and a push stream other than its own, while this
    /// host replicated before this start (its stream record was there): that change is this host's own earlier push
    /// under a stream its journal lost, or another host's under the same `cluster.host`. Applying it would take
    /// this host's own state for another host's and overwrite what it acknowledged since. A host at its first start
    /// (its state directory new or lost) has no pushes to account for, and converges on the database's content.
    /// Rows of the current-state table carry no stream and are not checked.
    func checkOwnRows(_ rows: [LogRow]) throws(OwnRowsUnaccounted) {
        guard journal.replicatedBefore else { return }
        let stream = journal.withState { $0.stream }
        guard let row = rows.first(where: { $0.host == host && !$0.stream.isEmpty && $0.stream != stream }) else {
            return
        }
        throw OwnRowsUnaccounted(
            damage: ReplicationJournal.Damage(
                reason: """
                    the database holds change \(row.seq) of this host's name (\(host)) from push stream \(row.stream), \
                    not this host's stream \(stream): none of this host's pushes it can account for
                    """))
    }

    /// Stops replicating after ``OwnRowsUnaccounted``: nothing more is applied or pushed until a restart, the host
    /// works alone, and the log, `stats.cluster` and every subscriber say why. The journal goes on recording this
    /// host's changes, so none is lost.
    func stopReplicating(_ damage: ReplicationJournal.Damage) async {
        status.withLock { status in
            status.stopped = damage
            status.connected = false
            status.outage = true
        }
        logger.error(
            "replication is stopped: the database holds a change of this host's name that this host did not push",
            metadata: [
                "damage": "\(damage)",
                "then": "check that no other host has the same cluster.host; see the recovery in the documentation",
            ])
        engine.setClusterUnavailable(message: "replication is stopped: \(damage)")
    }
}
