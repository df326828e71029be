import CoreMetrics
import Prometheus

extension DaemonMetrics {
    /// The gauges of what the daemon holds (its scenes, their newest revision, its memory), set together when
    /// scraped.
    struct Holdings: Sendable {
        let scenes: CoreMetrics.Gauge
        let revision: CoreMetrics.Gauge
        let residentBytes: CoreMetrics.Gauge

        init(factory: PrometheusMetricsFactory) {
            scenes = CoreMetrics.Gauge(label: "scenesync_scenes", factory: factory)
            revision = CoreMetrics.Gauge(label: "scenesync_revision", factory: factory)
            residentBytes = CoreMetrics.Gauge(label: "scenesync_resident_memory_bytes", factory: factory)
        }
    }
}
