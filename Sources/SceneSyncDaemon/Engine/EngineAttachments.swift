import SceneSyncCore

/// What the daemon plugs into the engine after it is made: the watcher, the replicator (and whether its database
/// is reachable), and the handlers of `reload` and of the systemd status line.
///
/// All but the watcher hold the engine in turn, so ``detach()`` lets go of them at shutdown.
struct EngineAttachments {
    /// The watcher whose events this engine takes (see ``EngineCore/drainWatcher()``); replaced when the
    /// directory is recreated.
    var watcher: InotifyWatcher? = nil
    /// Replication across hosts (§9), when `cluster.postgres` is set; see EngineCore+Replication.swift.
    var replicator: (any ChangeReplicator)? = nil
    /// While the cluster database is unreachable, the warning new subscriptions are told at once.
    var clusterOutage: String? = nil
    var reloadHandler: (@Sendable () async -> SceneSyncError?)? = nil
    /// Called after every accepted change and snapshot, to keep the systemd status line current.
    var onStatusChange: (@Sendable (String) -> Void)? = nil

    mutating func detach() {
        reloadHandler = nil
        onStatusChange = nil
        replicator = nil
    }
}
