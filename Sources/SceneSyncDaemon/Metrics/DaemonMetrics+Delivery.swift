import CoreMetrics
import Prometheus

extension DaemonMetrics {
    /// What became of the change events sent to subscribers, kept together because the outboxes record all three.
    struct Delivery: Sendable {
        let delivered: CoreMetrics.Counter
        let dropped: CoreMetrics.Counter
        /// From a change being queued to a connection to its bytes being handed to that connection's socket.
        let latency: CoreMetrics.Timer

        init(factory: PrometheusMetricsFactory) {
            delivered = CoreMetrics.Counter(label: "scenesync_events_delivered_total", factory: factory)
            dropped = CoreMetrics.Counter(label: "scenesync_events_dropped_total", factory: factory)
            latency = CoreMetrics.Timer(label: "scenesync_delivery_latency_seconds", factory: factory)
        }
    }
}
