/// The `fanout` scenario: one client pipelines `set`s on one scene as fast as the daemon accepts them while N
/// subscribers read everything; then one paced run, whose latency is not queueing.
struct FanoutBenchmark {
    let options: BenchOptions

    /// The subscriber queue the daemon is started with, above the default window so flow control, not the
    /// lag limit, paces the writer.
    static let subscriberQueue = 16_384

    /// The rate of the paced run with one subscriber: what a client change costs, beside Redis and the write floor.
    static let singleRate = 1000

    func run() throws(BenchError) {
        let counts = options.load.subscribers ?? [1, 10, 100, 1000]
        let duration = options.load.duration ?? 3
        let window = options.load.window ?? 8192
        let pacedRate = options.load.rate ?? 2000
        let table = ResultTable(scenario: "fanout", json: options.json)
        table.note(
            "scenesync-bench fanout: \(fixed(duration, 1)) s per run, window \(window) changes, "
                + "subscriber_queue \(Self.subscriberQueue), "
                + "load \(ProcessStats.loadAverage())")
        var comparisons: [Comparison] = []
        for count in counts {
            let result = try measure(subscribers: count, paced: nil, duration: duration, window: window)
            table.row(result.fields(run: "saturated"))
            guard options.peers else { continue }
            let redis = try measureRedis(subscribers: count, paced: nil, duration: duration, window: window)
            table.row(redis.fields(run: "redis saturated"))
            comparisons.append(
                Comparison(
                    figure: "fanout deliveries/s, \(count) subscribers", scenesync: result.deliveries.perSecond,
                    peer: "redis", peerValue: redis.deliveries.perSecond,
                    goal: .ratioAtLeast(count >= 100 ? 1.0 : 0.25), decimals: 0))
        }
        let single = try measure(subscribers: 1, paced: Self.singleRate, duration: duration, window: window)
        table.row(single.fields(run: "paced \(Self.singleRate)/s"))
        if options.peers {
            let redis = try measureRedis(subscribers: 1, paced: Self.singleRate, duration: duration, window: window)
            table.row(redis.fields(run: "redis paced \(Self.singleRate)/s"))
            comparisons += try costComparisons(single, redis, rate: Self.singleRate, duration: duration, table: table)
        }
        let paced = try measure(subscribers: 100, paced: pacedRate, duration: duration, window: window)
        table.row(paced.fields(run: "paced \(pacedRate)/s"))
        if options.peers {
            let redis = try measureRedis(subscribers: 100, paced: pacedRate, duration: duration, window: window)
            table.row(redis.fields(run: "redis paced \(pacedRate)/s"))
            let latency = paced.deliveries.totals.histogram
            let redisLatency = redis.deliveries.totals.histogram
            comparisons.append(
                Comparison(
                    figure: "paced 100 subs × \(pacedRate)/s, p99 ms", scenesync: latency.milliseconds(at: 0.99),
                    peer: "redis", peerValue: redisLatency.milliseconds(at: 0.99), goal: .ratioAtMost(1.0)))
            comparisons.append(
                Comparison(
                    figure: "paced 100 subs × \(pacedRate)/s, p50 ms", scenesync: latency.milliseconds(at: 0.5),
                    peer: "redis", peerValue: redisLatency.milliseconds(at: 0.5), goal: .ratioAtMost(1.0)))
            comparisons += try costComparisons(paced, redis, rate: pacedRate, duration: duration, table: table)
        }
        table.compare(comparisons)
    }

    /// The server one sub-run drives, however it was started.
    struct Server {
        let socketPath: String
        let wire: SubscriberProtocol
        let dialect: ChangeDriver.Dialect
        /// The channel or scene the writer changes.
        let scene: String
        /// The revision before the first measured change (0 for Redis, whose sequence starts at 1).
        let base: UInt64
        let cpuSeconds: () -> Double
        /// Voluntary context switches of every thread of the server (``ProcessStats/voluntarySwitches(_:)``).
        let switches: () -> Int
        let residentBytes: () -> Int
    }

    /// One sub-run on a fresh daemon (or the `--socket` one).
    func measure(
        subscribers count: Int, paced rate: Int?, duration: Double, window: Int
    ) throws(BenchError)
        -> FanoutResult
    {
        let config = """
            socket:
              max_clients: \(max(1024, count + 64))
              subscriber_queue: \(Self.subscriberQueue)
            """
        let target = try DaemonTarget.prepare(options, config: config)
        defer { target.finish() }
        let scene = "fanout-\(count)-\(rate ?? 0)"
        let control = try ControlClient(path: target.socketPath)
        let created = try control.request(
            "set", #","scene":"\#(scene)","path":\#(ChangeDriver.path(0))"#)
        guard let base = created["revision"]?.uint64Value else { throw BenchError("set: no revision") }
        let server = Server(
            socketPath: target.socketPath, wire: .scenesync, dialect: .scenesync, scene: scene, base: base,
            cpuSeconds: { target.cpuSeconds }, switches: { ProcessStats.voluntarySwitches(target.pid) },
            residentBytes: { target.residentBytes })
        return try drive(server, subscribers: count, paced: rate, duration: duration, window: window)
    }

    /// The same sub-run on a fresh redis-server: PUBLISH to `count` SUBSCRIBErs.
    func measureRedis(
        subscribers count: Int, paced rate: Int?, duration: Double, window: Int
    ) throws(BenchError) -> FanoutResult {
        let (peer, socket) = try PeerProcess.redis(filesystem: .tmpfs)
        defer { peer.cleanup() }
        let channel = "fanout-\(count)-\(rate ?? 0)"
        let server = Server(
            socketPath: socket, wire: .redis(channel: channel), dialect: .redis, scene: channel, base: 0,
            cpuSeconds: { peer.cpuSeconds }, switches: { ProcessStats.voluntarySwitches(peer.pid) },
            residentBytes: { peer.residentBytes })
        return try drive(server, subscribers: count, paced: rate, duration: duration, window: window)
    }

    /// Subscribers, then the writer, then the drain.
    func drive(
        _ server: Server, subscribers count: Int, paced rate: Int?, duration: Double, window: Int
    ) throws(BenchError) -> FanoutResult {
        let base = server.base
        let capacity = Int(duration * Double(rate ?? 1_000_000)) + 1024
        let stamps = StampTable(capacity: capacity)
        let pool = try SubscriberPool(
            socketPath: server.socketPath, count: count, threads: options.load.threads, mode: .revisions(base: base),
            stamps: stamps, protocol: server.wire)
        let driver = try ChangeDriver(
            socketPath: server.socketPath, scene: server.scene, stamps: stamps, base: base, dialect: server.dialect)

        let daemonCPU = server.cpuSeconds()
        let daemonSwitches = server.switches()
        let ownCPU = ProcessStats.ownCPUSeconds()
        pool.start()
        let deadline = Monotonic.now() + Int64(duration * 1e9)
        if let rate {
            try driver.runPaced(rate: rate, until: deadline)
        } else {
            try driver.runSaturated(until: deadline, window: window, pool: pool)
        }
        try driver.finish()
        let progress = driver.progress
        let caughtUp = pool.waitFor(revision: base + UInt64(progress.sent), timeout: 60)
        let totals = pool.stop()
        let result = FanoutResult(
            subscribers: count, threads: pool.threadCount, paced: rate,
            writes: FanoutResult.Writes(
                changes: progress.acknowledged, errors: progress.errors,
                seconds: Monotonic.seconds(progress.lastAcknowledgement - progress.firstSend),
                cpuSeconds: Monotonic.seconds(progress.cpuNanoseconds)),
            deliveries: Deliveries(totals, since: progress.firstSend),
            costs: FanoutResult.Costs(
                daemonCPU: server.cpuSeconds() - daemonCPU, daemonSwitches: server.switches() - daemonSwitches,
                clientCPU: ProcessStats.ownCPUSeconds() - ownCPU, daemonRSS: server.residentBytes()),
            complete: caughtUp && progress.lastRevision == base + UInt64(progress.sent))
        if !result.complete {
            printError(
                "scenesync-bench: fanout with \(count) subscribers did not converge (last revision "
                    + "\(progress.lastRevision), expected \(base + UInt64(progress.sent)), caught up: \(caughtUp))")
        }
        return result
    }
}
