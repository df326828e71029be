import CoreMetrics
import Prometheus

/// The daemon's metrics, recorded through the swift-metrics API and exported by swift-prometheus's registry in the
/// text exposition format (the `metrics` op, `scenesync metrics`).
///
/// The handlers are made with an explicit factory on the daemon's own registry rather than through
/// `MetricsSystem.bootstrap`: the registry belongs to this daemon, and a library that bootstrapped the process-wide
/// system would take that choice away from whoever embeds it. Counters are incremented where things happen; gauges
/// that are a view of the state (connections, subscriptions, lagging, scenes, RSS) are set when scraped. The handlers
/// are grouped by what they measure, each group a small value of its own that makes its own handlers.
public final class DaemonMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    let changes: Changes
    let delivery: Delivery
    let snapshots: Snapshots
    /// How long one turn of the engine (a batch of requests, or of watcher events) held it.
    let engineTurn: CoreMetrics.Timer
    let clients: Clients
    let holdings: Holdings

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(10), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.registry = registry
        changes = Changes(factory: factory)
        delivery = Delivery(factory: factory)
        snapshots = Snapshots(factory: factory)
        engineTurn = CoreMetrics.Timer(label: "scenesync_engine_turn_seconds", factory: factory)
        clients = Clients(factory: factory)
        holdings = Holdings(factory: factory)
    }

    /// The text exposition format.
    public func exposition() -> [UInt8] {
        registry.emitToBuffer()
    }

    /// Records how long `body` held the engine.
    @inline(__always)
    func timeTurn(since start: ContinuousClock.Instant) {
        engineTurn.recordInterval(since: start)
    }
}

extension CoreMetrics.Timer {
    func recordInterval(since start: ContinuousClock.Instant) {
        let (seconds, attoseconds) = (ContinuousClock.now - start).components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
