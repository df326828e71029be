import NIOCore
import SceneSyncCore

/// Everything that can happen to the engine, as one value: ``EngineCore/handle(_:)`` is its one entry point.
///
/// Each input is handed over on the engine's loop (``Engine`` does that). What the engine answers goes out through
/// the callback or the `EventLoopPromise` the input carries; a callback named `reply` is called before
/// ``EngineCore/handle(_:)`` returns, a promise may be fulfilled later.
enum EngineInput {
    // MARK: Connections (on the loop, answered in the same call)

    /// A connection is accepted: the outbox its output goes through.
    case newOutbox(reply: (Outbox) -> Void)
    /// A connection's peer is known: register it; `close` closes its channel; `reply` gets its ID.
    case connectionOpened(
        outbox: Outbox, credentials: PeerCredentials?, close: @Sendable () -> Void, reply: (UInt64) -> Void)
    /// A connection's batch of requests (``EngineCore/serve(_:connection:outbox:resume:)``): `reply` gets how many
    /// were served in this call, or `nil` when `resume` gets it later.
    case requests(
        ArraySlice<InboundRequest>, connection: UInt64, outbox: Outbox, resume: @Sendable (Int) -> Void,
        reply: (Int?) -> Void)
    /// The connection's channel is gone.
    case connectionClosed(UInt64)
    /// A connection's writer wants the next chunk of a subscription's catch-up, `nil` once there is none.
    case catchUpChunk(subscription: UInt64, reply: ((lines: [UInt8], events: Int, isLast: Bool)?) -> Void)
    /// A subscription's queue overflowed and its writer reached the marker: resync it.
    case lagged(subscription: UInt64)
    /// The end of a loop turn in which connections handed over batches with a change (see ``TurnEndBatches``).
    case turnEnded

    // MARK: The scenes directory

    /// The watcher service started a watcher (again, after the directory was recreated).
    case attachWatcher(InotifyWatcher)
    /// Take what the watcher's descriptor holds now.
    case drainWatcher
    /// File events, in kernel order; `watcherJustDrained` when they are what the descriptor held a moment ago.
    case fileEvents([SceneDirectoryEvent], watcherJustDrained: Bool)

    // MARK: Work off the engine's thread, back

    /// The revision high-water mark `mark` is written, or could not be (`failure`).
    case revisionsReserved(mark: UInt64, failure: String?)
    /// The scene files the group commit in flight did not know are read.
    case commitFilesRead([Result<[UInt8]?, SystemError>])
    /// The group commit's scene files are written.
    case commitFilesWritten(EngineCore.WrittenFiles)
    /// The cluster journal holds every change handed to the replicator so far, as `waiter` asked.
    case journalPersisted(JournalWaiter)
    /// The snapshot being written is written, or failed.
    case snapshotWritten(Result<SnapshotStore.Written, SystemError>)
    /// A `sync` cookie's file is created, or could not be (`failure`).
    case syncCookieCreated(cookie: String, failure: SystemError?)
    /// Other blocking or async work the engine started is done (a bulk step's chunk, a marker removed, a figure
    /// read): its completion goes on (see EngineCore+OffLoop.swift).
    case workDone(() -> Void)
    /// A deadline the engine set passed (a writer wait, the status line's flush).
    case timerFired(() -> Void)
    /// A waiter a step freed goes on, after that step.
    case resumed(() -> Void)

    // MARK: Time, signals, life

    /// The housekeeping tick, with the time it carries: heartbeats, stalled clients, retries. The promise is
    /// fulfilled once it is handled (the watchdog's proof that the engine's loop is not stuck).
    case tick(heartbeat: Bool, now: ContinuousClock.Instant, done: EventLoopPromise<Void>)
    /// A signal arrived; the promise gets what to do now.
    case signal(DaemonSignal, EventLoopPromise<DaemonLifecycle.Action?>)
    /// The socket listens: the promise gets the actions signals asked for while starting.
    case becomeReady(EventLoopPromise<[DaemonLifecycle.Action]>)
    /// `SIGUSR1`: a snapshot after a merge, whose outcome nobody waits for.
    case triggerSnapshot(Snapshot.Reason)
    /// A reloaded configuration's engine settings.
    case settings(EngineSettings)
    /// The start-up merge of the restored state and the scenes directory; the promise is fulfilled once it is over.
    case mergeDirectory(StartupScan, EventLoopPromise<Void>)
    /// Wait until every file event taken and every change queued so far is done.
    case settle(EventLoopPromise<Void>)
    /// Graceful shutdown (drain, final snapshot, clean-shutdown marker).
    case shutdown(EventLoopPromise<Void>)
    /// Wait until none of the engine's work is off its thread: the daemon's last wait.
    case quiesce(EventLoopPromise<Void>)

    // MARK: What the daemon attaches

    case attachReplicator(any ChangeReplicator)
    case reloadHandler(@Sendable () async -> SceneSyncError?)
    case statusHandler(@Sendable (String) -> Void)
    /// Let go of the handlers and the replicator, which hold the engine.
    case detachHandlers

    // MARK: Replication

    /// Other hosts' changes; the promise gets one outcome per change.
    case remoteBatch([RemoteChange], EventLoopPromise<[RemoteOutcome]>)
    case clusterAvailable(Bool, reason: String)
    case clusterUnavailable(message: String)

    /// Who waits for the cluster journal.
    enum JournalWaiter {
        /// The group commit in flight, before its answers.
        case groupCommit
        /// The snapshot being written, before it is encoded.
        case snapshot
    }
}
