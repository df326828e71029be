/// The `file-latency` scenario: an app replaces scene files atomically at a steady rate while K subscribers
/// listen; latency from just before each `rename` to a subscriber's receipt, and whether every write arrived.
struct FileLatencyBenchmark {
    let options: BenchOptions

    func run() throws(BenchError) {
        let counts = options.load.subscribers ?? [1, 100]
        let duration = options.load.duration ?? 5
        let rate = options.load.rate ?? 1000
        let files = options.store.scenes?.first ?? 100
        let table = ResultTable(scenario: "file-latency", json: options.json)
        table.note(
            "scenesync-bench file-latency: \(rate) writes/s over \(files) files for \(fixed(duration, 1)) s per run, "
                + "load \(ProcessStats.loadAverage())")
        var comparisons: [Comparison] = []
        for filesystem in options.filesystems {
            for count in counts {
                let run = Run(subscribers: count, rate: rate, files: files, duration: duration, filesystem: filesystem)
                let ours = try measure(run)
                table.row(ours.fields)
                guard options.peers else { continue }
                let watchman = try measurePeer(run, watchman: true)
                table.row(watchman.fields)
                let relay = try measurePeer(run, watchman: false)
                table.row(relay.fields)
                let figure = "file → subscriber p99 ms, \(count) subs, \(filesystem)"
                comparisons.append(
                    Comparison(
                        figure: figure, scenesync: ours.p99, peer: "watchman", peerValue: watchman.p99,
                        goal: .ratioAtMost(0.5)))
                comparisons.append(
                    Comparison(
                        figure: figure, scenesync: ours.p99, peer: "inotify relay", peerValue: relay.p99,
                        goal: .ratioAtMost(2.0)))
                guard count == 1 else { continue }
                comparisons.append(
                    Comparison(
                        figure: "rename \(rate)/s, 1 sub, \(filesystem): CPU µs/write", scenesync: ours.cpuPerWrite,
                        peer: "inotify relay", peerValue: relay.cpuPerWrite, goal: .ratioAtMost(2.0), decimals: 1))
                comparisons.append(
                    Comparison(
                        figure: "rename \(rate)/s, 1 sub, \(filesystem): ctx sw/write",
                        scenesync: ours.switchesPerWrite,
                        peer: "inotify relay", peerValue: relay.switchesPerWrite, goal: .atMost(3), decimals: 2))
            }
        }
        table.compare(comparisons)
    }

    struct Run {
        let subscribers: Int
        let rate: Int
        let files: Int
        let duration: Double
        let filesystem: Filesystem

        var writes: Int { max(1, Int(Double(rate) * duration)) }
    }

    struct Result {
        let fields: [Field]
        let p99: Double
        /// The server's CPU per write, in microseconds.
        let cpuPerWrite: Double
        /// The server's voluntary context switches per write, every thread.
        let switchesPerWrite: Double
    }

    /// scenesyncd: the files in its scenes directory, `sync` to know when every write has been merged.
    func measure(_ run: Run) throws(BenchError) -> Result {
        let config = """
            socket:
              max_clients: \(max(1024, run.subscribers + 64))
            """
        let target = try DaemonTarget.prepare(options, config: config, filesystem: run.filesystem)
        defer { target.finish() }
        guard let directory = target.scenesDirectory else {
            throw BenchError("file-latency with --socket needs --scenes-dir (the daemon's scenes directory)")
        }
        let control = try ControlClient(path: target.socketPath)
        return try drive(
            run, server: "scenesync", directory: directory, socketPath: target.socketPath, wire: { _ in .scenesync },
            cpuSeconds: { target.cpuSeconds }, switches: { ProcessStats.voluntarySwitches(target.pid) },
            residentBytes: { target.residentBytes },
            ready: { () throws(BenchError) in _ = try control.request("sync") },
            last: { () throws(BenchError) -> UInt64 in
                // Every write made before `sync` has been merged once it answers; then every subscriber has it.
                try control.request("sync")["revision"]?.uint64Value ?? 0
            })
    }

    /// watchman (a subscription, settle 0) or the raw inotify relay, on a directory of their own on the same
    /// filesystem. Their progress is the newest write sequence seen: both deliver in order.
    func measurePeer(_ run: Run, watchman: Bool) throws(BenchError) -> Result {
        let (peer, socket, root) =
            watchman
            ? try PeerProcess.watchman(filesystem: run.filesystem)
            : try PeerProcess.inotifyRelay(filesystem: run.filesystem)
        defer { peer.cleanup() }
        return try drive(
            run, server: watchman ? "watchman" : "inotify relay", directory: root, socketPath: socket,
            wire: { writer in watchman ? .watchman(root: root, latest: writer.latest) : .relay },
            cpuSeconds: { peer.cpuSeconds }, switches: { ProcessStats.voluntarySwitches(peer.pid) },
            residentBytes: { peer.residentBytes }, ready: {},
            last: { UInt64(run.writes) })
    }

    func drive(
        _ run: Run, server: String, directory: String, socketPath: String,
        wire: (SceneFileWriter) -> SubscriberProtocol, cpuSeconds: () -> Double, switches: () -> Int,
        residentBytes: () -> Int,
        ready: () throws(BenchError) -> Void, last: () throws(BenchError) -> UInt64
    ) throws(BenchError) -> Result {
        let count = run.subscribers
        let writes = run.writes
        let stamps = StampTable(capacity: writes + 1)
        let writer = SceneFileWriter(directory: directory, files: run.files, stamps: stamps)
        try writer.createAll()
        try ready()
        let pool = try SubscriberPool(
            socketPath: socketPath, count: count, threads: options.load.threads, mode: .fileSequences(files: run.files),
            stamps: stamps, protocol: wire(writer))

        let daemonCPU = cpuSeconds()
        let daemonSwitches = switches()
        let ownCPU = ProcessStats.ownCPUSeconds()
        var peakRSS = residentBytes()
        pool.start()
        let started = Monotonic.now()
        writer.runPaced(rate: run.rate, count: writes) { peakRSS = max(peakRSS, residentBytes()) }
        let writeSeconds = Monotonic.seconds(Monotonic.now() - started)
        let final = try last()
        let caughtUp = pool.waitFor(revision: final, timeout: 60)
        let totals = pool.stop()
        let lost = pool.lostFiles(finalSequences: writer.finalSequences(count: writes))
        if !caughtUp {
            printError("scenesync-bench: file-latency, \(server), \(count) subscribers: not every subscriber caught up")
        }
        let histogram = totals.histogram
        let written = Double(max(1, writer.written))
        let cpuPerWrite = (cpuSeconds() - daemonCPU) * 1e6 / written
        let switchesPerWrite = Double(switches() - daemonSwitches) / written
        let fields: [Field] = [
            .string("server", "server", server),
            .string("fs", "filesystem", run.filesystem.rawValue),
            .int("subs", "subscribers", count),
            .int("writes", "writes", writer.written),
            .number("writes/s", "writes_per_s", Double(writer.written) / writeSeconds, 0),
            .int("files", "files", run.files).jsonOnly,
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
            .number("server CPU s", "daemon_cpu_s", cpuSeconds() - daemonCPU, 2),
            .number("CPU µs/write", "daemon_cpu_us_per_write", cpuPerWrite, 1),
            .number("ctx sw/write", "daemon_switches_per_write", switchesPerWrite, 2),
            .number("client CPU s", "client_cpu_s", ProcessStats.ownCPUSeconds() - ownCPU, 2),
            .number("reader CPU s", "reader_cpu_s", Monotonic.seconds(totals.cpuNanoseconds), 2).jsonOnly,
            .number("writer CPU s", "writer_cpu_s", Monotonic.seconds(writer.cpuNanoseconds), 2).jsonOnly,
            .number("server RSS MB", "daemon_rss_mb", Double(peakRSS) / 1_048_576, 1).jsonOnly,
            .bool("complete", "complete", caughtUp && writer.failures == 0).jsonOnly,
        ]
        return Result(
            fields: fields, p99: histogram.milliseconds(at: 0.99), cpuPerWrite: cpuPerWrite,
            switchesPerWrite: switchesPerWrite)
    }
}
