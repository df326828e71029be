import CoreMetrics
import Prometheus

/// The daemon's metrics, recorded through the swift-metrics API and exported by swift-prometheus's registry in the
/// text exposition format (the `metrics` op, `scenesync metrics`).
///
/// The handlers are made with an explicit factory on the daemon's own registry rather than through
/// `MetricsSystem.bootstrap`: the registry belongs to this daemon, and a library that bootstrapped the process-wide
/// system would take that choice away from whoever embeds it. Counters are incremented where things happen; gauges
/// that are a view of the state (connections, subscriptions, lagging, scenes, RSS) are set when scraped.
public final class DaemonMetrics: Sendable {
    let registry: PrometheusCollectorRegistry

    let fileChanges: CoreMetrics.Counter
    let clientChanges: CoreMetrics.Counter
    let eventsDelivered: CoreMetrics.Counter
    let eventsDropped: CoreMetrics.Counter
    let fileErrors: CoreMetrics.Counter
    let snapshotsWritten: CoreMetrics.Counter
    let snapshotFailures: CoreMetrics.Counter
    let snapshotDuration: CoreMetrics.Timer
    /// From a change being queued to a connection to its bytes being handed to that connection's socket.
    let deliveryLatency: CoreMetrics.Timer
    /// How long one turn of the engine (a batch of requests, or of watcher events) held it.
    let engineTurn: CoreMetrics.Timer

    let connections: CoreMetrics.Gauge
    let subscriptions: CoreMetrics.Gauge
    let laggingSubscriptions: CoreMetrics.Gauge
    let scenes: CoreMetrics.Gauge
    let revision: CoreMetrics.Gauge
    let residentBytes: CoreMetrics.Gauge

    public init() {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(10), .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500),
            .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        self.registry = registry
        fileChanges = CoreMetrics.Counter(
            label: "scenesync_changes_total", dimensions: [("source", "file")], factory: factory)
        clientChanges = CoreMetrics.Counter(
            label: "scenesync_changes_total", dimensions: [("source", "client")], factory: factory)
        eventsDelivered = CoreMetrics.Counter(label: "scenesync_events_delivered_total", factory: factory)
        eventsDropped = CoreMetrics.Counter(label: "scenesync_events_dropped_total", factory: factory)
        fileErrors = CoreMetrics.Counter(label: "scenesync_file_errors_total", factory: factory)
        snapshotsWritten = CoreMetrics.Counter(
            label: "scenesync_snapshots_total", dimensions: [("result", "ok")], factory: factory)
        snapshotFailures = CoreMetrics.Counter(
            label: "scenesync_snapshots_total", dimensions: [("result", "failed")], factory: factory)
        snapshotDuration = CoreMetrics.Timer(label: "scenesync_snapshot_duration_seconds", factory: factory)
        deliveryLatency = CoreMetrics.Timer(label: "scenesync_delivery_latency_seconds", factory: factory)
        engineTurn = CoreMetrics.Timer(label: "scenesync_engine_turn_seconds", factory: factory)
        connections = CoreMetrics.Gauge(label: "scenesync_connections", factory: factory)
        subscriptions = CoreMetrics.Gauge(label: "scenesync_subscriptions", factory: factory)
        laggingSubscriptions = CoreMetrics.Gauge(label: "scenesync_lagging_subscriptions", factory: factory)
        scenes = CoreMetrics.Gauge(label: "scenesync_scenes", factory: factory)
        revision = CoreMetrics.Gauge(label: "scenesync_revision", factory: factory)
        residentBytes = CoreMetrics.Gauge(label: "scenesync_resident_memory_bytes", factory: factory)
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
