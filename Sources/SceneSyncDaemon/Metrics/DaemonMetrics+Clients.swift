import CoreMetrics
import Prometheus

extension DaemonMetrics {
    /// The gauges of the clients and their subscriptions, set together from the engine's registry when scraped.
    struct Clients: Sendable {
        let connections: CoreMetrics.Gauge
        let subscriptions: CoreMetrics.Gauge
        let laggingSubscriptions: CoreMetrics.Gauge

        init(factory: PrometheusMetricsFactory) {
            connections = CoreMetrics.Gauge(label: "scenesync_connections", factory: factory)
            subscriptions = CoreMetrics.Gauge(label: "scenesync_subscriptions", factory: factory)
            laggingSubscriptions = CoreMetrics.Gauge(label: "scenesync_lagging_subscriptions", factory: factory)
        }
    }
}
