public import ServiceLifecycle

/// Holds the engine for the service group. Listed last, it is the first to see a graceful shutdown (the group
/// shuts services down in reverse order): it refuses further changes, tells the clients and writes the final
/// snapshot while the socket and the watcher are still up.
public struct EngineService: Service {
    let engine: Engine

    public init(engine: Engine) {
        self.engine = engine
    }

    public func run() async throws {
        // Throws only when cancelled, which also means the daemon is stopping.
        try? await gracefulShutdown()
        await engine.shutdown()
    }
}

extension EngineService: CustomStringConvertible {
    public var description: String { "EngineService" }
}
