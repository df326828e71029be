import CoreMetrics
import Prometheus

extension DaemonMetrics {
    /// How snapshots went, recorded together where a snapshot ends.
    struct Snapshots: Sendable {
        let written: CoreMetrics.Counter
        let failed: CoreMetrics.Counter
        let duration: CoreMetrics.Timer

        init(factory: PrometheusMetricsFactory) {
            written = CoreMetrics.Counter(
                label: "scenesync_snapshots_total", dimensions: [("result", "ok")], factory: factory)
            failed = CoreMetrics.Counter(
                label: "scenesync_snapshots_total", dimensions: [("result", "failed")], factory: factory)
            duration = CoreMetrics.Timer(label: "scenesync_snapshot_duration_seconds", factory: factory)
        }
    }
}
