import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The `stats` and `metrics` ops: what the engine reports of itself.
extension EngineCore {
    func appendStats(to response: inout ResponseWriter, residentBytes: Int) {
        response.appendClock(store.clock)
        response.append("scenes", int: store.count)
        response.append("clients", int: registry.connections.count)
        response.append("subscribers", int: registry.subscriptions.count)
        response.append("uptime_s", int: Int((ContinuousClock.now - startedAt).components.seconds))
        response.append("events_sent", int: counters.eventsSent)
        response.append("events_dropped", int: counters.eventsDropped)
        response.append("lagged", int: registry.laggingCount)
        report.appendStats(to: &response, testHooks: settings.testHooks)
        response.append("rss_bytes", int: residentBytes)
        response.append("cluster", json: clusterStatsJSON())
    }

    /// Sets the gauges that are a view of the state, just before they are read.
    func refreshGauges(residentBytes: Int) {
        metrics.clients.connections.record(registry.connections.count)
        metrics.clients.subscriptions.record(registry.subscriptions.count)
        metrics.clients.laggingSubscriptions.record(registry.laggingCount)
        metrics.holdings.scenes.record(store.count)
        metrics.holdings.revision.record(Double(store.revision))
        metrics.holdings.residentBytes.record(residentBytes)
    }
}

/// Resident set size from `/proc/self/statm`, for `stats` and `metrics`. Read on ``BlockingIO`` like every file:
/// procfs never waits for a disk, but reading it takes the process's memory map lock, which a thread faulting in
/// pages may hold.
enum ResidentMemory {
    static func bytes() -> Int {
        // Without procfs the figure is unknown, and `stats` reports 0 rather than fail the whole answer.
        guard let bytes = (try? FileSystem.read("/proc/self/statm", limit: 256)).flatMap({ $0 }) else { return 0 }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
