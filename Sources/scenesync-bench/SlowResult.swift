/// The figures of one slow-subscriber run.
struct SlowResult {
    var slow: Bool
    var healthy: Int
    var rate: Int
    var changes: Int
    var deliveries: Deliveries
    var daemonCPU: Double
    var memory: Memory
    var lag: Lag
    var complete: Bool

    func fields(baseline: SlowResult) -> [Field] {
        let totals = deliveries.totals
        let histogram = totals.histogram
        return [
            .string("run", "run", slow ? "1 slow subscriber" : "undisturbed"),
            .int("healthy", "healthy_subscribers", healthy),
            .int("changes/s", "changes_per_s_target", rate),
            .number("deliveries/s", "deliveries_per_s", deliveries.perSecond, 0),
            .number("vs undisturbed", "rate_ratio", deliveries.perSecond / baseline.deliveries.perSecond, 3),
            .number("p50 ms", "p50_ms", histogram.milliseconds(at: 0.5), 3),
            .number("p99 ms", "p99_ms", histogram.milliseconds(at: 0.99), 3),
            .number("max ms", "max_ms", histogram.maximumMilliseconds, 3),
            .number("RSS start MB", "rss_start_mb", Double(memory.start) / 1_048_576, 1),
            .number("RSS peak MB", "rss_peak_mb", Double(memory.peak) / 1_048_576, 1),
            .number("RSS end MB", "rss_end_mb", Double(memory.end) / 1_048_576, 1).jsonOnly,
            .int("dropped", "events_dropped", lag.dropped),
            .int("lagging", "lagging_subscriptions", lag.lagged).jsonOnly,
            .bool("resync", "slow_got_resync", lag.resynced),
            .number("daemon CPU s", "daemon_cpu_s", daemonCPU, 2),
            .int("lost", "lost", totals.gaps),
            .int("dup", "duplicated", totals.duplicates).jsonOnly,
            .int("resyncs", "healthy_resyncs", totals.resyncs).jsonOnly,
            .bool("complete", "complete", complete).jsonOnly,
        ]
    }
}
