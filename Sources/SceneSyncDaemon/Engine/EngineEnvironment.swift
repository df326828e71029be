import Logging

#if canImport(Glibc)
import Glibc
#endif

/// What the engine is given once and never changes: where it logs, reports and writes, the bounds it enforces, and
/// the loop and the executor it runs its work on. Sendable, so the engine's parts (jobs on the blocking
/// executor) reach it without a hop.
struct EngineEnvironment: Sendable {
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
    let ownUID = getuid()
    /// The thread the engine, its connections and the tasks that drive them run on. Given, not made here, so that
    /// it can exist before the engine: the daemon starts the watcher on it before the snapshot is decoded.
    let loop: EngineLoop
    /// Where every blocking call runs, off the engine's thread. Given, like ``loop``: the restore lists and checks
    /// the scenes directory on it while the snapshot is decoded.
    let io: BlockingIO

    init(
        stateDirectory: StateDirectory, logger: Logger, limits: ConnectionLimits, metrics: DaemonMetrics,
        loop: EngineLoop, io: BlockingIO
    ) {
        self.logger = logger
        self.loop = loop
        self.io = io
        self.stateDirectory = stateDirectory
        self.snapshots = SnapshotStore(directory: stateDirectory.snapshotsPath)
        self.counters = DeliveryCounters(metrics: metrics)
        self.metrics = metrics
        self.limits = limits
    }
}

/// Each part of the environment by its own name, as the engine's code reads best.
extension EngineCore {
    var logger: Logger { environment.logger }
    var stateDirectory: StateDirectory { environment.stateDirectory }
    var snapshots: SnapshotStore { environment.snapshots }
    var counters: DeliveryCounters { environment.counters }
    var metrics: DaemonMetrics { environment.metrics }
    var limits: ConnectionLimits { environment.limits }
    var startedAt: ContinuousClock.Instant { environment.startedAt }
    var ownUID: UInt32 { environment.ownUID }
    var io: BlockingIO { environment.io }
    /// The engine's thread, for the control socket's channels and for the tasks that call the engine.
    package var loop: EngineLoop { environment.loop }
}
