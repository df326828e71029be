/// The `file-latency` scenario: an app replaces scene files atomically at a steady rate while K subscribers
/// listen; latency from just before each `rename` to a subscriber's receipt, and whether every write arrived.
struct FileLatencyBenchmark {
    let options: BenchOptions

    func run() throws(BenchError) {
        let counts = options.subscribers ?? [1, 100]
        let duration = options.duration ?? 5
        let rate = options.rate ?? 1000
        let files = options.scenes?.first ?? 100
        let table = ResultTable(scenario: "file-latency", json: options.json)
        table.note(
            "scenesync-bench file-latency: \(rate) writes/s over \(files) files for \(fixed(duration, 1)) s per run, "
                + "load \(ProcessStats.loadAverage())")
        for count in counts {
            table.row(try measure(subscribers: count, rate: rate, files: files, duration: duration))
        }
    }

    func measure(subscribers count: Int, rate: Int, files: Int, duration: Double) throws(BenchError) -> [Field] {
        let config = """
            socket:
              max_clients: \(max(1024, count + 64))
            """
        let target = try DaemonTarget.prepare(options, config: config)
        defer { target.finish() }
        guard let directory = target.scenesDirectory else {
            throw BenchError("file-latency with --socket needs --scenes-dir (the daemon's scenes directory)")
        }
        let writes = max(1, Int(Double(rate) * duration))
        let stamps = StampTable(capacity: writes + 1)
        let writer = SceneFileWriter(directory: directory, files: files, stamps: stamps)
        try writer.createAll()
        let control = try ControlClient(path: target.socketPath)
        _ = try control.request("sync")
        let pool = try SubscriberPool(
            socketPath: target.socketPath, count: count, threads: options.threads, mode: .fileSequences(files: files),
            stamps: stamps)

        let daemonCPU = target.cpuSeconds
        let ownCPU = ProcessStats.ownCPUSeconds()
        var peakRSS = target.residentBytes
        pool.start()
        let started = Monotonic.now()
        writer.runPaced(rate: rate, count: writes) { peakRSS = max(peakRSS, target.residentBytes) }
        let writeSeconds = Monotonic.seconds(Monotonic.now() - started)
        // Every write made before `sync` has been merged once it answers; then every subscriber must have it.
        let synced = try control.request("sync")
        let last = synced["revision"]?.uint64Value ?? 0
        let caughtUp = pool.waitFor(revision: last, timeout: 60)
        let totals = pool.stop()
        let lost = pool.lostFiles(finalSequences: writer.finalSequences(count: writes))
        if !caughtUp {
            printError("scenesync-bench: file-latency with \(count) subscribers: not every subscriber reached r\(last)")
        }
        let histogram = totals.histogram
        return [
            .int("subs", "subscribers", count),
            .int("writes", "writes", writer.written),
            .number("writes/s", "writes_per_s", Double(writer.written) / writeSeconds, 0),
            .int("files", "files", files).jsonOnly,
            .number("p50 ms", "p50_ms", histogram.milliseconds(at: 0.5), 3),
            .number("p99 ms", "p99_ms", histogram.milliseconds(at: 0.99), 3),
            .number("p99.9 ms", "p999_ms", histogram.milliseconds(at: 0.999), 3),
            .number("max ms", "max_ms", histogram.maximumMilliseconds, 3),
            .int("deliveries", "deliveries", totals.delivered),
            .int("coalesced", "coalesced", totals.coalesced),
            .int("lost", "lost", lost),
            .int("dup", "duplicated", totals.duplicates),
            .int("gaps", "revision_gaps", totals.gaps).jsonOnly,
            .int("resyncs", "resyncs", totals.resyncs).jsonOnly,
            .number("daemon CPU s", "daemon_cpu_s", target.cpuSeconds - daemonCPU, 2),
            .number("client CPU s", "client_cpu_s", ProcessStats.ownCPUSeconds() - ownCPU, 2),
            .number("reader CPU s", "reader_cpu_s", Monotonic.seconds(totals.cpuNanoseconds), 2).jsonOnly,
            .number("writer CPU s", "writer_cpu_s", Monotonic.seconds(writer.cpuNanoseconds), 2).jsonOnly,
            .number("daemon RSS MB", "daemon_rss_mb", Double(peakRSS) / 1_048_576, 1).jsonOnly,
            .bool("complete", "complete", caughtUp && writer.failures == 0).jsonOnly,
        ]
    }
}
