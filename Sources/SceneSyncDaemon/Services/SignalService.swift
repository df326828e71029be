public import Logging
public import ServiceLifecycle
import UnixSignals

/// `SIGUSR1` (background phase: snapshot) and `SIGHUP` (reload). `SIGTERM`/`SIGINT` belong to the service
/// group's graceful shutdown.
public struct SignalService: Service {
    let engine: SceneEngine
    let reload: @Sendable () async -> Void
    let logger: Logger

    public init(engine: SceneEngine, logger: Logger, reload: @escaping @Sendable () async -> Void) {
        self.engine = engine
        self.reload = reload
        self.logger = logger
    }

    public func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sigusr1, .sighup)
        for await signal in signals.cancelOnGracefulShutdown() {
            switch signal {
            case .sigusr1:
                logger.info("SIGUSR1: background phase, writing a snapshot")
                await engine.triggerSnapshot(reason: .signal)
            case .sighup:
                logger.info("SIGHUP: reloading the configuration")
                await reload()
            default:
                break
            }
        }
    }
}

extension SignalService: CustomStringConvertible {
    public var description: String { "SignalService" }
}
