public import ServiceLifecycle

/// Periodic work: heartbeats, disconnecting stalled lagging clients, and the systemd watchdog.
///
/// The watchdog is pinged only after a round trip through the engine (its tick is handled on the engine's loop), so
/// a stuck engine loop stops the pings and systemd restarts the daemon.
public struct HousekeepingService: Service {
    let engine: Engine
    /// Where the heartbeat interval is read, at every tick: a reload applies it at once (§8).
    let limits: ConnectionLimits
    /// Half the watchdog interval, when systemd asked for one.
    let watchdogInterval: Duration?
    let pingWatchdog: @Sendable () -> Void

    public init(
        engine: Engine, limits: ConnectionLimits, watchdogInterval: Duration?,
        pingWatchdog: @escaping @Sendable () -> Void
    ) {
        self.engine = engine
        self.limits = limits
        self.watchdogInterval = watchdogInterval
        self.pingWatchdog = pingWatchdog
    }

    public func run() async throws {
        // Tick often enough for stall detection and the watchdog, heartbeat at its own interval.
        let clock = ContinuousClock()
        var interval = limits.heartbeatInterval
        var nextHeartbeat = clock.now + interval
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let tick = min(interval, .seconds(1), watchdogInterval ?? .seconds(1))
            do {
                // Cancelled by a graceful shutdown, so a stop never waits for the next tick.
                try await cancelWhenGracefulShutdown {
                    try await Task.sleep(for: tick, tolerance: .milliseconds(50), clock: clock)
                }
            } catch {
                return
            }
            if limits.heartbeatInterval != interval {
                // Reloaded: the next heartbeat is one new interval after the last one.
                nextHeartbeat = nextHeartbeat - interval + limits.heartbeatInterval
                interval = limits.heartbeatInterval
            }
            let heartbeat = clock.now >= nextHeartbeat
            if heartbeat { nextHeartbeat = clock.now + interval }
            await engine.tick(heartbeat: heartbeat)
            if watchdogInterval != nil { pingWatchdog() }
        }
    }
}

extension HousekeepingService: CustomStringConvertible {
    public var description: String { "HousekeepingService" }
}
