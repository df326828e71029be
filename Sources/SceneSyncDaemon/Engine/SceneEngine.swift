import Logging
public import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The single owner of the scene state.
///
/// Every change — a scene file the watcher reports, a client request, a restore — is applied here, one at a time,
/// so revisions are handed out in one total order and every subscriber sees the same sequence. Fan-out only appends
/// to per-connection ``Outbox``es and never waits; slow I/O that does not decide a change (snapshots) runs off the
/// actor.
public actor SceneEngine {
    var store: SceneStore
    var settings: EngineSettings
    let logger: Logger
    let stateDirectory: StateDirectory
    let snapshots: SnapshotStore
    let counters: DeliveryCounters
    /// Counters, gauges and histograms for the `metrics` op.
    let metrics: DaemonMetrics
    /// Bounds of every connection, shared with the server and changed in place by a reload.
    let limits: ConnectionLimits
    let startedAt = ContinuousClock.now
    /// Our own uid: the daemon's user may always write.
    let ownUID: UInt32

    /// Which revisions are durably reserved, and the next block being reserved ahead (see
    /// SceneEngine+Revisions.swift).
    var revisions: RevisionReservation<CheckedContinuation<String?, Never>>

    /// The clients, their subscriptions and the catch-ups owed to them.
    var registry = SubscriptionRegistry()
    typealias Subscription = SubscriptionRegistry.Subscription

    /// The watcher whose events this engine takes (see ``drainWatcher()``); replaced when the directory is recreated.
    var watcher: InotifyWatcher? = nil
    /// Scene files written in place and not closed yet: not a change until closed (§3).
    var openWriters: Set<SceneID> = []
    /// Client changes waiting for such a writer to close its file, by scene.
    var writerWaiters: [SceneID: [WriterWaiter]] = [:]
    var nextWriterWaiter: UInt64 = 1

    /// Why a rescan is owed: its listing of the directory failed (EMFILE, ENOMEM), and ``tick(heartbeat:)`` retries it.
    var rescanRetry: String? = nil

    /// Where every blocking call runs, off the engine's executor.
    let io = BlockingIO()
    /// Every task the engine starts; the daemon runs it (``runTasks()``).
    let tasks = EngineTasks()
    /// File events, client change groups and other hosts' batches, one step at a time (see ``runPipeline()``).
    var pipeline = Pipeline()
    typealias Pipeline = PipelineMachine<
        SceneDirectoryEvent, ChangeGroup, PendingRemote, CheckedContinuation<Void, Never>
    >

    /// The `sync` requests waiting for their cookie to come through the watcher.
    var syncBarriers = SyncBarriers<CheckedContinuation<Clock, Never>>()

    /// Scene files whose change could not be merged because no revision could be reserved (a full or failing state
    /// directory): merged again, from their content then, at every housekeeping tick until it works.
    var deferredMerges: Set<SceneID> = []
    /// The digest of each scene's rejected file content: the same bad content merged again (a second event for one
    /// write, a rescan) is not warned about twice, and when the daemon's rename displaces it, it is known, not an
    /// app's new write (see ``isKnownFileContent(_:of:)``). Cleared when a good file or the file's removal is merged.
    var rejectedFiles: [SceneID: UInt64] = [:]

    /// The counts of `stats`, the last snapshot, and when the status line goes out.
    var report = EngineReport()
    /// When snapshots are written; its waiters are the `snapshot` requests and triggers.
    var snapshotMachine = SnapshotMachine<CheckedContinuation<Result<SnapshotStore.Written, SceneSyncError>, Never>>()

    /// Starting, ready, draining or stopped: what may happen now is asked of it, never decided here.
    var lifecycle = DaemonLifecycle()
    var reloadHandler: (@Sendable () async -> SceneSyncError?)? = nil

    /// Called after every accepted change and snapshot, to keep the systemd status line current.
    var onStatusChange: (@Sendable (String) -> Void)? = nil

    /// Replication across hosts (§9), when `cluster.postgres` is set; see SceneEngine+Replication.swift.
    var replicator: (any ChangeReplicator)? = nil
    /// While the cluster database is unreachable, the warning new subscriptions are told at once.
    var clusterOutage: String? = nil

    init(
        store: SceneStore, settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger,
        reservedRevision: UInt64, limits: ConnectionLimits, metrics: DaemonMetrics
    ) {
        self.limits = limits
        self.metrics = metrics
        self.counters = DeliveryCounters(metrics: metrics)
        self.store = store
        self.settings = settings
        self.stateDirectory = stateDirectory
        self.snapshots = SnapshotStore(directory: stateDirectory.snapshotsPath)
        self.logger = logger
        self.ownUID = getuid()
        self.revisions = RevisionReservation(durable: reservedRevision, block: settings.revisionBlock)
    }

    public var clock: Clock { store.clock }
}
