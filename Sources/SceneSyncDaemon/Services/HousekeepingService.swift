public import ServiceLifecycle

/// Periodic work: heartbeats, disconnecting stalled lagging clients, and the systemd watchdog.
///
/// The watchdog is pinged only after a round trip through the engine actor, so a stuck owner loop stops the pings
/// and systemd restarts the daemon.
public struct HousekeepingService: Service {
    let engine: SceneEngine
    let heartbeatInterval: Duration
    /// Half the watchdog interval, when systemd asked for one.
    let watchdogInterval: Duration?
    let pingWatchdog: @Sendable () -> Void

    public init(
        engine: SceneEngine, heartbeatInterval: Duration, watchdogInterval: Duration?,
        pingWatchdog: @escaping @Sendable () -> Void
    ) {
        self.engine = engine
        self.heartbeatInterval = heartbeatInterval
        self.watchdogInterval = watchdogInterval
        self.pingWatchdog = pingWatchdog
    }

    public func run() async throws {
        // Tick often enough for stall detection and the watchdog, heartbeat at its own interval.
        var interval = min(heartbeatInterval, .seconds(1))
        if let watchdogInterval { interval = min(interval, watchdogInterval) }
        let tick = interval
        let clock = ContinuousClock()
        var nextHeartbeat = clock.now + heartbeatInterval
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                // Cut short by a graceful shutdown: otherwise every stop would wait for the rest of the tick.
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: tick, tolerance: .milliseconds(50), clock: clock)
                }
            } catch {
                return
            }
            let heartbeat = clock.now >= nextHeartbeat
            if heartbeat { nextHeartbeat = clock.now + heartbeatInterval }
            await engine.tick(heartbeat: heartbeat)
            if watchdogInterval != nil { pingWatchdog() }
        }
    }
}

extension HousekeepingService: CustomStringConvertible {
    public var description: String { "HousekeepingService" }
}
