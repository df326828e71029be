public import Logging
public import ServiceLifecycle

/// The shell around ``DaemonLifecycle``: feeds it the signals and the moment of readiness, and performs the
/// actions it returns (a snapshot, a reload, the graceful shutdown of the service group).
public struct LifecycleDriver: Sendable {
    let engine: Engine
    let group: ServiceGroup
    let reload: @Sendable () async -> Void
    let logger: Logger

    public init(
        engine: Engine, group: ServiceGroup, logger: Logger, reload: @escaping @Sendable () async -> Void
    ) {
        self.engine = engine
        self.group = group
        self.reload = reload
        self.logger = logger
    }

    /// Takes every signal for the life of the process. Started before the start-up merge, so a signal that comes
    /// while starting is remembered by the lifecycle rather than left pending.
    public func run(_ signals: AsyncStream<DaemonSignal>) async {
        for await signal in signals {
            if let action = await engine.receive(signal) {
                logger.info("\(signal): \(Self.describe(action))")
                await perform(action)
            }
        }
    }

    /// Called once the socket listens on the merged state.
    public func ready() async {
        for action in await engine.becomeReady() {
            logger.info("acting on a signal that came while starting: \(Self.describe(action))")
            await perform(action)
        }
    }

    func perform(_ action: DaemonLifecycle.Action) async {
        switch action {
        case .writeSnapshot:
            engine.triggerSnapshot(reason: .signal)
        case .reload:
            await reload()
        case .beginShutdown:
            await group.triggerGracefulShutdown()
        }
    }

    static func describe(_ action: DaemonLifecycle.Action) -> String {
        switch action {
        case .writeSnapshot: "background phase, writing a snapshot"
        case .reload: "reloading the configuration"
        case .beginShutdown: "shutting down"
        }
    }
}
