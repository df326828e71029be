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
    /// Pending catch-ups (the `state` events of a subscribe or resync), oldest first per subscription: each walks
    /// the store as it was when the catch-up was queued, and is written a chunk at a time (see
    /// ``nextCatchUpChunk(subscription:)``).
    var catchUps: [UInt64: [CatchUp]] = [:]
    let startedAt = ContinuousClock.now
    /// Our own uid: the daemon's user may always write.
    let ownUID: UInt32

    /// Which revisions are durably reserved, and the next block being reserved ahead (see
    /// SceneEngine+Revisions.swift).
    var revisions: RevisionReservation<CheckedContinuation<String?, Never>>

    var connections: [UInt64: ConnectionContext] = [:]
    var subscriptions: [UInt64: Subscription] = [:]
    var nextSubscriptionID: UInt64 = 1
    var nextConnectionID: UInt64 = 1

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

    var fileErrors = 0
    /// Reported in `stats` only under test hooks (see ``TestCounters``).
    var testCounters = TestCounters()
    var snapshotsWritten = 0
    var lastSnapshot: SnapshotStore.Written? = nil
    /// When snapshots are written; its waiters are the `snapshot` requests and triggers.
    var snapshotMachine = SnapshotMachine<CheckedContinuation<Result<SnapshotStore.Written, SceneSyncError>, Never>>()

    /// Starting, ready, draining or stopped: what may happen now is asked of it, never decided here.
    var lifecycle = DaemonLifecycle()
    var reloadHandler: (@Sendable () async -> SceneSyncError?)? = nil

    /// Called after every accepted change and snapshot, to keep the systemd status line current.
    var onStatusChange: (@Sendable (String) -> Void)? = nil
    /// When the status line last went out, and whether a trailing update is already scheduled (see
    /// ``publishStatus()``).
    var statusSentAt: ContinuousClock.Instant? = nil
    var statusFlushScheduled = false
    var lastStatusLine = ""

    /// Replication across hosts (§9), when `cluster.postgres` is set; see SceneEngine+Replication.swift.
    var replicator: (any ChangeReplicator)? = nil
    /// While the cluster database is unreachable, the warning new subscriptions are told at once.
    var clusterOutage: String? = nil

    struct Subscription {
        var id: UInt64
        var connection: UInt64
        var patterns: [ScenePattern]
        let outbox: Outbox

        func matches(_ scene: SceneID) -> Bool { patterns.contains { $0.matches(scene) } }
    }

    /// One client connection, as the engine sees it.
    public struct ConnectionContext: Sendable {
        let id: UInt64
        let outbox: Outbox
        let credentials: PeerCredentials?
        /// Closes the connection (stall timeout, shutdown).
        let close: @Sendable () -> Void
        var clientName: String? = nil
    }

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

    func setStatusHandler(_ handler: @escaping @Sendable (String) -> Void) {
        onStatusChange = handler
        lastStatusLine = statusLine
        statusSentAt = .now
        handler(lastStatusLine)
    }

    /// The one-line summary for systemd's `STATUS=`.
    var statusLine: String {
        var line = "\(store.count) scenes, revision \(store.revision), \(subscriptions.count) subscribers"
        if let lastSnapshot { line += ", last snapshot r\(lastSnapshot.revision) (\(lastSnapshot.reason.rawValue))" }
        return line
    }

    // MARK: - Status

    /// The status line changes with every accepted change, but each update is a datagram to systemd (a socket, a
    /// `sendto` and a `close` on the owner loop, and a wake-up of PID 1). Updates are therefore sent at most once
    /// per ``statusInterval``: the first at once, the ones that follow within the interval as one trailing update
    /// when it ends, so the line is never more than that interval behind. `force` sends at once (after a snapshot,
    /// which operators look for right away).
    func publishStatus(force: Bool = false) {
        if force, onStatusChange != nil {
            sendStatus(.now)
            return
        }
        guard onStatusChange != nil, !statusFlushScheduled else { return }
        let now = ContinuousClock.now
        guard let sentAt = statusSentAt, now - sentAt < Self.statusInterval else {
            sendStatus(now)
            return
        }
        statusFlushScheduled = true
        tasks.spawn {
            try? await Task.sleep(until: sentAt + Self.statusInterval, clock: .continuous)  // cancelled: flush now
            await self.flushStatus()
        }
    }

    private func flushStatus() {
        statusFlushScheduled = false
        sendStatus(.now)
    }

    private func sendStatus(_ now: ContinuousClock.Instant) {
        statusSentAt = now
        let line = statusLine
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        onStatusChange?(line)
    }

    static let statusInterval = Duration.milliseconds(100)
}
