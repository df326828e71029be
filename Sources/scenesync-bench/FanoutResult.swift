/// The figures of one fanout run.
struct FanoutResult {
    var subscribers: Int
    var threads: Int
    var paced: Int?
    var writes: Writes
    var deliveries: Deliveries
    var costs: Costs
    var complete: Bool

    /// `total` per acknowledged change; 0 when there was none.
    func perChange(_ total: Double) -> Double {
        writes.changes > 0 ? total / Double(writes.changes) : 0
    }

    func fields(run: String) -> [Field] {
        let totals = deliveries.totals
        let daemonCPU = costs.daemonCPU
        let delivered = Double(totals.delivered)
        let histogram = totals.histogram
        return [
            .string("run", "run", run),
            .int("subs", "subscribers", subscribers),
            .number("changes/s", "changes_per_s", writes.perSecond, 0),
            .number("deliveries/s", "deliveries_per_s", deliveries.perSecond, 0),
            .number("p50 ms", "p50_ms", histogram.milliseconds(at: 0.5), 3),
            .number("p99 ms", "p99_ms", histogram.milliseconds(at: 0.99), 3),
            .number("p99.9 ms", "p999_ms", histogram.milliseconds(at: 0.999), 3).jsonOnly,
            .number("max ms", "max_ms", histogram.maximumMilliseconds, 3),
            .number("daemon CPU s", "daemon_cpu_s", daemonCPU, 2),
            .number("CPU s/M deliv", "daemon_cpu_s_per_million", delivered > 0 ? daemonCPU / delivered * 1e6 : 0, 2),
            .number("CPU µs/change", "daemon_cpu_us_per_change", perChange(daemonCPU * 1e6), 1),
            .number("ctx sw/change", "daemon_switches_per_change", perChange(Double(costs.daemonSwitches)), 2),
            .number("client CPU s", "client_cpu_s", costs.clientCPU, 2),
            .number("writer CPU s", "writer_cpu_s", writes.cpuSeconds, 2).jsonOnly,
            .number("reader CPU s", "reader_cpu_s", Monotonic.seconds(totals.cpuNanoseconds), 2).jsonOnly,
            .int("reader threads", "reader_threads", threads).jsonOnly,
            .int("changes", "changes", writes.changes),
            .int("deliveries", "deliveries", totals.delivered).jsonOnly,
            .number("wall s", "wall_s", deliveries.seconds, 2).jsonOnly,
            .int("event bytes", "event_bytes", totals.delivered > 0 ? totals.bytes / totals.delivered : 0).jsonOnly,
            .int("lost", "lost", totals.gaps),
            .int("dup", "duplicated", totals.duplicates),
            .int("resyncs", "resyncs", totals.resyncs),
            .int("errors", "errors", writes.errors).jsonOnly,
            .number("daemon RSS MB", "daemon_rss_mb", Double(costs.daemonRSS) / 1_048_576, 1).jsonOnly,
            .bool("complete", "complete", complete).jsonOnly,
        ]
    }
}
