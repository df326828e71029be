import CoreMetrics
import Prometheus

extension DaemonMetrics {
    /// The changes that came in, by where they came from, with the file changes that could not be taken: the
    /// counters an operator compares to see whether apps or the files drive the daemon.
    struct Changes: Sendable {
        let file: CoreMetrics.Counter
        let client: CoreMetrics.Counter
        let fileErrors: CoreMetrics.Counter

        init(factory: PrometheusMetricsFactory) {
            file = CoreMetrics.Counter(
                label: "scenesync_changes_total", dimensions: [("source", "file")], factory: factory)
            client = CoreMetrics.Counter(
                label: "scenesync_changes_total", dimensions: [("source", "client")], factory: factory)
            fileErrors = CoreMetrics.Counter(label: "scenesync_file_errors_total", factory: factory)
        }
    }
}
