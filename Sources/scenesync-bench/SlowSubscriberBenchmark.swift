#if canImport(Glibc)
import Glibc
#endif

/// The `slow-subscriber` scenario: a steady stream to healthy subscribers, once undisturbed and once with one more
/// subscriber that stops reading. The healthy ones must not notice, and the daemon's memory must stay bounded by
/// the queue limit (`socket.subscriber_queue`, left at its default 4096) instead of growing with the backlog.
struct SlowSubscriberBenchmark {
    let options: BenchOptions

    func run() throws(BenchError) {
        let healthy = options.load.subscribers?.first ?? 100
        let duration = options.load.duration ?? 5
        let rate = options.load.rate ?? 2000
        let table = ResultTable(scenario: "slow-subscriber", json: options.json)
        table.note(
            "scenesync-bench slow-subscriber: \(healthy) subscribers, \(rate) changes/s for \(fixed(duration, 1)) s, "
                + "subscriber_queue 4096, load \(ProcessStats.loadAverage())")
        let undisturbed = try measure(healthy: healthy, slow: false, rate: rate, duration: duration)
        table.row(undisturbed.fields(baseline: undisturbed))
        let disturbed = try measure(healthy: healthy, slow: true, rate: rate, duration: duration)
        table.row(disturbed.fields(baseline: undisturbed))
    }

    func measure(healthy count: Int, slow: Bool, rate: Int, duration: Double) throws(BenchError) -> SlowResult {
        let config = """
            socket:
              max_clients: \(max(1024, count + 64))
              subscriber_queue: 4096
            """
        let target = try DaemonTarget.prepare(options, config: config)
        defer { target.finish() }
        let scene = "slow-\(slow ? 1 : 0)"
        let control = try ControlClient(path: target.socketPath)
        let created = try control.request("set", #","scene":"\#(scene)","path":\#(ChangeDriver.path(0))"#)
        guard let base = created["revision"]?.uint64Value else { throw BenchError("set: no revision") }
        let before = try control.request("stats")

        let stamps = StampTable(capacity: Int(Double(rate) * duration) + 1024)
        let pool = try SubscriberPool(
            socketPath: target.socketPath, count: count, threads: options.load.threads, mode: .revisions(base: base),
            stamps: stamps)
        var slowFD: Int32 = -1
        if slow {
            slowFD = try UnixSocket.connect(target.socketPath)
            try UnixSocket.sendAll(
                slowFD, Array(#"{"id":1,"op":"subscribe","scenes":["*"],"initial":false}"#.utf8) + [0x0A])
            _ = try SubscriberPool.readUntilSynced(slowFD)
            // From here on it reads nothing until the stream is over.
        }
        defer { if slowFD >= 0 { close(slowFD) } }
        let driver = try ChangeDriver(socketPath: target.socketPath, scene: scene, stamps: stamps, base: base)

        let daemonCPU = target.cpuSeconds
        let startRSS = target.residentBytes
        var peakRSS = startRSS
        pool.start()
        try driver.runPaced(rate: rate, until: Monotonic.now() + Int64(duration * 1e9)) {
            peakRSS = max(peakRSS, target.residentBytes)
        }
        try driver.finish()
        let progress = driver.progress
        let caughtUp = pool.waitFor(revision: base + UInt64(progress.sent), timeout: 60)
        let totals = pool.stop()
        let endRSS = target.residentBytes
        let cpu = target.cpuSeconds - daemonCPU
        let after = try control.request("stats")
        let dropped = Int(after["events_dropped"]?.uint64Value ?? 0) - Int(before["events_dropped"]?.uint64Value ?? 0)
        let lagged = Int(after["lagged"]?.uint64Value ?? 0)
        // The slow subscriber reads again: it must get a resync (reason lagged), not a silent gap.
        let resynced = slowFD >= 0 ? Self.readsResync(slowFD, timeout: 10) : false
        return SlowResult(
            slow: slow, healthy: count, rate: rate, changes: progress.acknowledged,
            deliveries: Deliveries(totals, since: progress.firstSend),
            daemonCPU: cpu, memory: SlowResult.Memory(start: startRSS, peak: peakRSS, end: endRSS),
            lag: SlowResult.Lag(dropped: dropped, lagged: lagged, resynced: resynced), complete: caughtUp)
    }

    /// Drains the socket until a `resync` with reason `lagged` arrives.
    static func readsResync(_ fd: Int32, timeout: Double) -> Bool {
        let marker = Array(#""event":"resync""#.utf8)
        let reason = Array(#""reason":"lagged""#.utf8)
        var tail: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let deadline = Monotonic.now() + Int64(timeout * 1e9)
        while Monotonic.now() < deadline {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return false }
            tail.append(contentsOf: chunk[0..<count])
            while let newline = tail.firstIndex(of: 0x0A) {
                let line = Array(tail[..<newline])
                tail.removeFirst(newline + 1)
                if SubscriberPool.firstRange(of: marker, in: line) != nil,
                    SubscriberPool.firstRange(of: reason, in: line) != nil
                {
                    return true
                }
            }
        }
        return false
    }
}
