import Logging
import NIOCore
import SceneSyncCore

/// The single owner of the scene state, and of every decision about it.
///
/// Every change — a scene file the watcher reports, a client request, a restore — is applied here, one at a time,
/// so revisions are handed out in one total order and every subscriber sees the same sequence. It is a plain class
/// used only on the engine's event loop (``EngineLoop``), never shared: everything outside holds an ``Engine``, a
/// `Sendable` handle that hands each input to ``handle(_:)`` on that loop. Nothing here waits: fan-out only appends
/// to per-connection ``Outbox``es, and blocking work goes to ``BlockingIO`` with a completion that comes back to
/// the loop as one more input (see EngineCore+OffLoop.swift).
final class EngineCore {
    var store: SceneStore
    var settings: EngineSettings
    /// The logger, the state directory, the metrics, the bounds and the blocking executor: given once.
    let environment: EngineEnvironment
    /// Starting, ready, draining or stopped: what may happen now is asked of it, never decided here.
    var lifecycle = DaemonLifecycle()

    /// File events, client change groups and other hosts' batches, one step at a time (see
    /// ``runPipelineSteps(watcherJustDrained:)``).
    var pipeline = Pipeline()
    typealias Pipeline = PipelineMachine<
        SceneDirectoryEvent, ChangeGroup, PendingRemote, () -> Void
    >
    /// The group commit in flight, between the actions its shell performs (see EngineCore+GroupCommit.swift).
    var commitRun: Commit? = nil
    /// Which revisions are durably reserved, and the next block being reserved ahead (see
    /// EngineCore+Revisions.swift).
    var revisions: RevisionReservation<(String?) -> Void>
    /// What the engine knows of the scene files beyond their content: which are open for writing, which wait to be
    /// merged again, which were rejected, and whether a rescan is owed.
    var sceneFiles = SceneFileState<() -> Void>()
    /// The file the daemon last wrote for each scene, for the writer on whichever thread it runs: its next write
    /// of the scene then knows what it displaced without reading it back.
    let lastWrites: LastWrites
    /// The `sync` requests waiting for their cookie to come through the watcher.
    var syncBarriers = SyncBarriers<(Clock) -> Void>()
    /// The snapshot being written, between the steps of its write (see EngineCore+Snapshots.swift).
    var snapshotInFlight: SnapshotInFlight? = nil
    /// The `sync` requests whose cookie file is being created, by cookie.
    var syncCookies: [String: (Result<Clock, SceneSyncError>) -> Void] = [:]
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
    /// daemon's shutdown waits for none to be left (``quiesce(then:)``).
    var inFlight = InFlightWork<() -> Void>()

    init(
        store: SceneStore, settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger,
        reservedRevision: UInt64, limits: ConnectionLimits, metrics: DaemonMetrics, loop: EngineLoop, io: BlockingIO
    ) {
        self.store = store
        self.settings = settings
        lastWrites = LastWrites(directory: settings.scenesDirectory)
        self.environment = EngineEnvironment(
            stateDirectory: stateDirectory, logger: logger, limits: limits, metrics: metrics, loop: loop, io: io)
        self.revisions = RevisionReservation(durable: reservedRevision, block: settings.revisionBlock)
    }

    var clock: Clock { store.clock }
}
