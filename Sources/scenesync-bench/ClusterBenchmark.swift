import SceneSyncTestKit

#if canImport(Glibc)
import Glibc
#endif

/// The `cluster` scenario: three scenesyncd hosts on this machine sharing one private PostgreSQL (SPEC §9). An app
/// replaces scene files on host A at a steady rate; a subscriber of host B times each `rename` to its `change`.
/// Beside it, in the same run, PostgreSQL's own `LISTEN`/`NOTIFY` round trip, the floor. Then the changes/s that
/// converge (a burst written as fast as possible, until B has every file's last write) and the time B takes to
/// converge after a database restart that missed changes.
struct ClusterBenchmark {
    let options: BenchOptions

    static let hostNames = ["hostA", "hostB", "hostC"]

    func run() throws(BenchError) {
        let rates = options.cluster.rates ?? [100, 1000]
        let duration = options.load.duration ?? 3
        let files = options.store.scenes?.first ?? 100
        let burst = options.cluster.burst ?? 5000
        let table = ResultTable(scenario: "cluster", json: options.json)
        table.note(
            "scenesync-bench cluster: \(Self.hostNames.count) hosts, one PostgreSQL (Unix socket, fsync off), "
                + "\(fixed(duration, 1)) s per rate over \(files) files, load \(ProcessStats.loadAverage())")
        let postgres = try BenchError.postgres { () throws(PrivatePostgresError) in
            try PrivatePostgres(in: BenchDaemon.root(.disk))
        }
        defer { postgres.cleanup() }
        try BenchError.postgres { () throws(PrivatePostgresError) in try postgres.start() }
        let binary = try BenchDaemon.locate(options)
        var hosts: [BenchDaemon] = []
        defer {
            for host in hosts {
                do {
                    try host.stop()
                } catch {
                    // A host that fails or hangs at shutdown is a finding too, as in `DaemonTarget.finish()`.
                    printError("scenesync-bench: \(error)")
                }
                host.cleanup()
            }
        }
        for name in Self.hostNames {
            let config = """
                socket:
                  heartbeat_s: 3600
                cluster:
                  postgres: "\(postgres.url)"
                  host: \(name)
                """
            let host = try BenchDaemon(binary: binary, config: config)
            hosts.append(host)
            try host.start()
        }
        let controlA = try ControlClient(path: hosts[0].socketPath)
        let controlB = try ControlClient(path: hosts[1].socketPath)
        for host in hosts { try waitConnected(try ControlClient(path: host.socketPath)) }

        var comparisons: [Comparison] = []
        for rate in rates {
            let count = max(1, Int(Double(rate) * duration))
            let floor = try NotifyFloor.measure(socketPath: postgres.socketPath, rate: rate, count: count)
            table.row([
                .string("measure", "measure", "NOTIFY round trip"),
                .int("rate/s", "rate", rate),
                .int("changes", "changes", count),
                .number("p50 ms", "p50_ms", floor.milliseconds(at: 0.5), 3),
                .number("p99 ms", "p99_ms", floor.milliseconds(at: 0.99), 3),
                .number("p99.9 ms", "p999_ms", floor.milliseconds(at: 0.999), 3),
                .number("max ms", "max_ms", floor.maximumMilliseconds, 3),
                .int("received", "received", Int(floor.totalCount)),
                .int("coalesced", "coalesced", 0),
                .int("lost", "lost", count - Int(floor.totalCount)),
            ])
            let run = try propagate(
                rate: rate, count: count, files: files, hosts: hosts, controlA: controlA, controlB: controlB)
            table.row(run.fields)
            comparisons.append(
                Comparison(
                    figure: "A → B p99 ms, \(rate)/s", scenesync: run.p99,
                    peer: "NOTIFY", peerValue: floor.milliseconds(at: 0.99), goal: .ratioAtMost(3)))
        }
        let throughput = try converge(burst: burst, files: files, hosts: hosts, controlA: controlA, controlB: controlB)
        table.row(throughput)
        let restart = try restartDatabase(postgres, files: files, hosts: hosts, controlB: controlB)
        table.row(restart)
        table.compare(comparisons)
    }

    struct Propagation {
        let fields: [Field]
        let p99: Double
    }

    /// `count` writes at `rate` on A's files, a subscriber on B; the run ends once B has every file's last write.
    func propagate(
        rate: Int, count: Int, files: Int, hosts: [BenchDaemon], controlA: ControlClient, controlB: ControlClient
    ) throws(BenchError) -> Propagation {
        let stamps = StampTable(capacity: count + 1)
        let writer = SceneFileWriter(
            directory: hosts[0].scenesDirectory, files: files, stamps: stamps, prefix: "rate\(rate)")
        try writer.createAll()
        _ = try controlA.request("sync")
        guard try waitFor(writer, sequences: nil, on: controlB, timeout: 60) else {
            throw BenchError("cluster: host B never received the \(files) new scenes")
        }
        let pool = try SubscriberPool(
            socketPath: hosts[1].socketPath, count: 1, threads: 1, mode: .fileSequences(files: files), stamps: stamps)
        pool.start()
        let started = Monotonic.now()
        writer.runPaced(rate: rate, count: count)
        let writeSeconds = Monotonic.seconds(Monotonic.now() - started)
        let finals = writer.finalSequences(count: count)
        let converged = try waitFor(writer, sequences: finals, on: controlB, timeout: 60)
        let revision = try controlB.request("sync")["revision"]?.uint64Value ?? 0
        let caughtUp = pool.waitFor(revision: revision, timeout: 30)
        let totals = pool.stop()
        let lost = pool.lostFiles(finalSequences: finals)
        if !converged || !caughtUp {
            printError("scenesync-bench: cluster at \(rate)/s: host B or its subscriber did not catch up")
        }
        let histogram = totals.histogram
        let fields: [Field] = [
            .string("measure", "measure", "A rename → B change"),
            .int("rate/s", "rate", rate),
            .int("changes", "changes", writer.written),
            .number("writes/s", "writes_per_s", Double(writer.written) / writeSeconds, 0).jsonOnly,
            .number("p50 ms", "p50_ms", histogram.milliseconds(at: 0.5), 3),
            .number("p99 ms", "p99_ms", histogram.milliseconds(at: 0.99), 3),
            .number("p99.9 ms", "p999_ms", histogram.milliseconds(at: 0.999), 3),
            .number("max ms", "max_ms", histogram.maximumMilliseconds, 3),
            .int("received", "received", totals.delivered),
            .int("coalesced", "coalesced", totals.coalesced),
            .int("lost", "lost", lost),
            .bool("complete", "complete", converged && caughtUp && writer.failures == 0).jsonOnly,
        ]
        return Propagation(fields: fields, p99: histogram.milliseconds(at: 0.99))
    }

    /// `burst` writes as fast as the writer goes; changes/s = writes / (first write → B has every last write).
    func converge(
        burst: Int, files: Int, hosts: [BenchDaemon], controlA: ControlClient, controlB: ControlClient
    ) throws(BenchError) -> [Field] {
        let writer = SceneFileWriter(
            directory: hosts[0].scenesDirectory, files: files, stamps: StampTable(capacity: burst + 1),
            prefix: "burst")
        try writer.createAll()
        _ = try controlA.request("sync")
        guard try waitFor(writer, sequences: nil, on: controlB, timeout: 60) else {
            throw BenchError("cluster: host B never received the burst's scenes")
        }
        let started = Monotonic.now()
        for sequence in 1...burst { writer.write(sequence: sequence) }
        let writeSeconds = Monotonic.seconds(Monotonic.now() - started)
        let converged = try waitFor(
            writer, sequences: writer.finalSequences(count: burst), on: controlB, timeout: 120)
        let seconds = Monotonic.seconds(Monotonic.now() - started)
        if !converged { printError("scenesync-bench: cluster burst: host B did not converge within 120 s") }
        return [
            .string("measure", "measure", "burst converged"),
            .int("changes", "changes", writer.written),
            .number("writes/s", "writes_per_s", Double(writer.written) / writeSeconds, 0),
            .number("converge s", "converge_s", seconds, 3),
            .number("changes/s", "converged_changes_per_s", converged ? Double(writer.written) / seconds : 0, 0),
        ]
    }

    /// The database goes down (immediately, as in a crash), A writes one change per file, the database comes
    /// back: the seconds from `pg_ctl start` returning until B has every change.
    func restartDatabase(
        _ postgres: PrivatePostgres, files: Int, hosts: [BenchDaemon], controlB: ControlClient
    ) throws(BenchError) -> [Field] {
        let writer = SceneFileWriter(
            directory: hosts[0].scenesDirectory, files: files, stamps: StampTable(capacity: files + 1),
            prefix: "restart")
        try writer.createAll()
        guard try waitFor(writer, sequences: nil, on: controlB, timeout: 60) else {
            throw BenchError("cluster: host B never received the restart run's scenes")
        }
        try BenchError.postgres { () throws(PrivatePostgresError) in try postgres.stop(immediate: true) }
        for sequence in 1...files { writer.write(sequence: sequence) }
        let startSeconds = try BenchError.postgres { () throws(PrivatePostgresError) in try postgres.start() }
        let started = Monotonic.now()
        let converged = try waitFor(
            writer, sequences: writer.finalSequences(count: files), on: controlB, timeout: 120)
        let seconds = Monotonic.seconds(Monotonic.now() - started)
        if !converged { printError("scenesync-bench: cluster restart: host B did not converge within 120 s") }
        return [
            .string("measure", "measure", "database restart"),
            .int("changes", "changes", writer.written),
            .number("pg start s", "postgres_start_s", startSeconds, 3),
            .number("converge s", "converge_s", converged ? seconds : .nan, 3),
        ]
    }

    /// Polls B's `get` until each file has `sequences[file]` (or, without sequences, exists); `false` on timeout.
    func waitFor(
        _ writer: SceneFileWriter, sequences: [Int]?, on control: ControlClient, timeout: Double
    ) throws(BenchError) -> Bool {
        let deadline = Monotonic.now() + Int64(timeout * 1e9)
        for file in 0..<writer.files {
            let marker = sequences.map { Array(#""s":\#($0[file]),"#.utf8) } ?? Array(#""ok":true"#.utf8)
            while true {
                let line = Array(try control.requestLine("get", #","scene":"\#(writer.scene(file))""#))
                if SubscriberPool.firstRange(of: marker, in: line) != nil { break }
                guard Monotonic.now() < deadline else { return false }
                // Polling another host's state: it has no event for "this write arrived" of its own.
                usleep(500)
            }
        }
        return true
    }

    /// Waits until the host reports `stats.cluster.connected`.
    func waitConnected(_ control: ControlClient) throws(BenchError) {
        let deadline = Monotonic.now() + 60_000_000_000
        while Monotonic.now() < deadline {
            if try control.request("stats")["cluster"]?["connected"]?.boolValue == true { return }
            usleep(2000)
        }
        throw BenchError("cluster: a host did not connect to PostgreSQL within 60 s")
    }
}
