import Synchronization

/// Daemon-wide delivery counters for `stats`, mirrored into the metrics when there are any.
final class DeliveryCounters: Sendable {
    private let sent = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    let metrics: DaemonMetrics?

    init(metrics: DaemonMetrics? = nil) {
        self.metrics = metrics
    }

    func delivered(_ count: Int) {
        sent.add(count, ordering: .relaxed)
        if count > 0 { metrics?.delivery.delivered.increment(by: count) }
    }

    func dropped(_ count: Int) {
        droppedCount.add(count, ordering: .relaxed)
        metrics?.delivery.dropped.increment(by: count)
    }

    var eventsSent: Int { sent.load(ordering: .relaxed) }
    var eventsDropped: Int { droppedCount.load(ordering: .relaxed) }
}
