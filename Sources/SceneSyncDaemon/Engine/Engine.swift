package import Logging
import NIOCore
public import SceneSyncCore

/// The engine as everything outside it holds it: a `Sendable` handle to the ``EngineCore`` on its loop.
///
/// Each method builds an ``EngineInput`` and hands it to ``EngineCore/handle(_:)``: at once when called on the
/// engine's loop, as a job of the loop otherwise (jobs run in the order they were queued). A caller that waits for
/// an answer gets it through an `EventLoopPromise` the input carries.
public struct Engine: Sendable {
    private let core: NIOLoopBound<EngineCore>
    /// The engine's thread, for the control socket's channels, the watcher and the tasks that call the engine.
    package let loop: EngineLoop
    /// The daemon's one blocking executor, for the replicator's own blocking calls (the cluster journal's writes):
    /// one executor for the whole process, so a busy disk is shared, never fought over by a second pool.
    package let blockingIO: BlockingIO
    let counters: DeliveryCounters

    /// On the engine's loop, where the core lives from now on.
    init(core: EngineCore) {
        self.core = NIOLoopBound(core, eventLoop: core.loop.eventLoop)
        self.loop = core.loop
        self.blockingIO = core.io
        self.counters = core.counters
    }

    /// See ``EngineCore/restore(settings:stateDirectory:logger:loop:watch:limits:metrics:)``.
    package static func restore(
        settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger, loop: EngineLoop,
        watch: () throws(SceneSyncError) -> InotifyWatcher, limits: ConnectionLimits = ConnectionLimits(),
        metrics: DaemonMetrics = DaemonMetrics()
    ) async throws(SceneSyncError) -> (engine: Engine, scan: StartupScan, watcher: InotifyWatcher) {
        try await EngineCore.restore(
            settings: settings, stateDirectory: stateDirectory, logger: logger, loop: loop, watch: watch,
            limits: limits, metrics: metrics)
    }

    /// Hands the input `make` builds to the core, on its loop.
    private func send(_ make: @escaping @Sendable () -> EngineInput) {
        let core = core
        guard loop.eventLoop.inEventLoop else {
            loop.eventLoop.execute { core.value.handle(make()) }
            return
        }
        core.value.handle(make())
    }

    /// Hands the input `make` builds to the core and waits for the promise it carries.
    private func ask<Value: Sendable>(
        _ make: @escaping @Sendable (EventLoopPromise<Value>) -> EngineInput
    ) async -> Value {
        let promise = loop.eventLoop.makePromise(of: Value.self)
        send { make(promise) }
        return await promise.futureResult.outcome()
    }

    /// Hands an input answered in the same call to the core; on the engine's loop only.
    func handleNow<Reply>(_ make: (@escaping (Reply) -> Void) -> EngineInput) -> Reply {
        var reply: Reply? = nil
        core.value.handle(make { reply = $0 })
        guard let reply else { preconditionFailure("the engine answers this input in the call that hands it over") }
        return reply
    }

    /// Hands an input with no answer to the core; on the engine's loop only.
    func handleNow(_ input: EngineInput) {
        core.value.handle(input)
    }

    // MARK: - The scenes directory

    /// The watcher to take events from; the watcher service attaches each one it starts.
    public func attach(_ watcher: InotifyWatcher) {
        send { .attachWatcher(watcher) }
    }

    /// Takes and handles every event the watcher read or the kernel holds now, in order.
    public func drainWatcher() {
        send { .drainWatcher }
    }

    /// Takes file events that did not come from the watcher's descriptor (an overflow the service stands for).
    public func take(_ events: [SceneDirectoryEvent]) {
        send { .fileEvents(events, watcherJustDrained: false) }
    }

    /// Waits until every file event taken and every change queued so far is done.
    public func settle() async {
        await ask { .settle($0) }
    }

    // MARK: - Time, signals, life

    /// The housekeeping tick: heartbeats, stalled clients, retries. Returns once the engine has handled it.
    public func tick(heartbeat: Bool) async {
        let now = ContinuousClock.now
        await ask { .tick(heartbeat: heartbeat, now: now, done: $0) }
    }

    /// A signal arrived: what to do now (nothing while starting, where it is remembered for ``becomeReady()``).
    public func receive(_ signal: DaemonSignal) async -> DaemonLifecycle.Action? {
        await ask { .signal(signal, $0) }
    }

    /// The socket listens on a fully merged state: serve, and perform what signals asked for meanwhile.
    public func becomeReady() async -> [DaemonLifecycle.Action] {
        await ask { .becomeReady($0) }
    }

    /// For `SIGUSR1`: snapshot without waiting for the result (failures are logged and broadcast).
    public func triggerSnapshot(reason: Snapshot.Reason) {
        send { .triggerSnapshot(reason) }
    }

    /// Applies a reloaded configuration. Limits and the format policy take effect for the next change.
    public func apply(_ settings: EngineSettings) {
        send { .settings(settings) }
    }

    /// Merges the restored state and the scenes directory (see ``restore(settings:stateDirectory:logger:loop:watcher:limits:metrics:)``).
    package func mergeDirectory(_ scan: StartupScan) async {
        await ask { .mergeDirectory(scan, $0) }
    }

    /// Graceful shutdown: refuse further changes, tell every client, write the final snapshot and the marker.
    public func shutdown() async {
        await ask { .shutdown($0) }
    }

    /// Waits until none of the engine's work is off its thread: the daemon's last wait for the engine.
    public func quiesce() async {
        await ask { .quiesce($0) }
    }

    // MARK: - What the daemon attaches

    /// Connects the replicator; before the start-up merge, so that changes found then are pushed too.
    public func attach(replicator: any ChangeReplicator) {
        send { .attachReplicator(replicator) }
    }

    public func setReloadHandler(_ handler: @escaping @Sendable () async -> SceneSyncError?) {
        send { .reloadHandler(handler) }
    }

    func setStatusHandler(_ handler: @escaping @Sendable (String) -> Void) {
        send { .statusHandler(handler) }
    }

    /// Lets go of what the daemon attached: each holds the engine.
    public func detachHandlers() {
        send { .detachHandlers }
    }

    // MARK: - Replication

    /// Applies other hosts' changes (see ``EngineCore/applyRemote(_:then:)``); one outcome per change, in order.
    public func applyRemote(_ changes: [RemoteChange]) async -> [RemoteOutcome] {
        await ask { .remoteBatch(changes, $0) }
    }

    /// Whether the cluster database is reachable; a change is told to every subscription once (§9).
    public func setClusterAvailable(_ available: Bool, reason: String) {
        send { .clusterAvailable(available, reason: reason) }
    }

    /// Replication stopped for a reason of its own, the whole `message` told to every subscription (§9).
    public func setClusterUnavailable(message: String) {
        send { .clusterUnavailable(message: message) }
    }
}
