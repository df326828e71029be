import Logging
import NIOCore
public import SceneSyncCore

/// The single owner of the scene state.
///
/// Every change — a scene file the watcher reports, a client request, a restore — is applied here, one at a time,
/// so revisions are handed out in one total order and every subscriber sees the same sequence. Fan-out only appends
/// to per-connection ``Outbox``es and never waits; slow I/O that does not decide a change (snapshots) runs off the
/// actor.
public actor SceneEngine {
    var store: SceneStore
    var settings: EngineSettings
    /// The logger, the state directory, the metrics, the bounds and the blocking executor: given once.
    let environment: EngineEnvironment
    /// Starting, ready, draining or stopped: what may happen now is asked of it, never decided here.
    var lifecycle = DaemonLifecycle()

    /// File events, client change groups and other hosts' batches, one step at a time (see ``runPipelineSteps()``).
    var pipeline = Pipeline()
    typealias Pipeline = PipelineMachine<
        SceneDirectoryEvent, ChangeGroup, PendingRemote, EventLoopPromise<Void>
    >
    /// The group commit in flight, between the actions its shell performs (see SceneEngine+GroupCommit.swift).
    var commitRun: Commit? = nil
    /// Which revisions are durably reserved, and the next block being reserved ahead (see
    /// SceneEngine+Revisions.swift).
    var revisions: RevisionReservation<(String?) -> Void>
    /// What the engine knows of the scene files beyond their content: which are open for writing, which wait to be
    /// merged again, which were rejected, and whether a rescan is owed.
    var sceneFiles = SceneFileState<() -> Void>()
    /// The `sync` requests waiting for their cookie to come through the watcher.
    var syncBarriers = SyncBarriers<(Clock) -> Void>()
    /// When snapshots are written; its waiters are the `snapshot` requests and triggers.
    var snapshotMachine = SnapshotMachine<(Result<SnapshotStore.Written, SceneSyncError>) -> Void>()

    /// The clients, their subscriptions and the catch-ups owed to them.
    var registry = SubscriptionRegistry()
    typealias Subscription = SubscriptionRegistry.Subscription
    /// The counts of `stats`, the last snapshot, and when the status line goes out.
    var report = EngineReport()
    /// The watcher, the replicator and the handlers the daemon plugs in.
    var attachments = EngineAttachments()
    /// Connections' batches with a change, served at the end of the loop turn that read them.
    var turnEnd = TurnEndBatches()
    /// The engine's work off its thread (blocking calls, async calls outside it), until each reports back; the
    /// daemon's shutdown waits for none to be left (``quiesce()``).
    var inFlight = InFlightWork<EventLoopPromise<Void>>()

    init(
        store: SceneStore, settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger,
        reservedRevision: UInt64, limits: ConnectionLimits, metrics: DaemonMetrics, loop: EngineLoop, io: BlockingIO
    ) {
        self.store = store
        self.settings = settings
        self.environment = EngineEnvironment(
            stateDirectory: stateDirectory, logger: logger, limits: limits, metrics: metrics, loop: loop, io: io)
        self.revisions = RevisionReservation(durable: reservedRevision, block: settings.revisionBlock)
    }

    public var clock: Clock { store.clock }

    /// The engine runs on its own event loop (``EngineLoop``), with the connections it serves.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        environment.loop.eventLoop.executor.asUnownedSerialExecutor()
    }
}
