import Histogram

#if canImport(Glibc)
import Glibc
#endif

/// The `scale` scenario: S realistic scene files, then the daemon's life with them — cold start to READY and to a
/// complete `list`, memory, `list`/`get` latency, a snapshot, shutdown, and a restart that restores it.
struct ScaleBenchmark {
    let options: BenchOptions

    func run() throws(BenchError) {
        guard options.daemon.socket == nil else {
            throw BenchError("scale starts and restarts its own daemon; --socket is not supported")
        }
        let counts = options.store.scenes ?? [10_000, 100_000]
        let table = ResultTable(scenario: "scale", json: options.json)
        table.note(
            "scenesync-bench scale: scene files on a tmpfs (/dev/shm), state directory on $TMPDIR, "
                + "load \(ProcessStats.loadAverage())")
        let binary = try BenchDaemon.locate(options)
        var comparisons: [Comparison] = []
        for count in counts {
            let ours = try measure(scenes: count, binary: binary)
            table.row(ours.fields)
            guard options.peers else { continue }
            let redis = try measureRedis(scenes: count)
            table.row(redis.fields)
            let scenes = Self.grouped(count)
            comparisons += [
                Comparison(
                    figure: "\(scenes) scenes: restart to READY s", scenesync: ours.restart, peer: "redis",
                    peerValue: redis.restart, goal: .atMost(0.25)),
                Comparison(
                    figure: "\(scenes) scenes: snapshot s (redis SAVE)", scenesync: ours.snapshot, peer: "redis",
                    peerValue: redis.snapshot, goal: .ratioAtMost(1.0)),
                Comparison(
                    figure: "\(scenes) scenes: RSS MB", scenesync: ours.rss, peer: "redis", peerValue: redis.rss,
                    goal: .ratioAtMost(1.0), decimals: 1),
                Comparison(
                    figure: "\(scenes) scenes: RSS after restart MB", scenesync: ours.restartRSS, peer: "redis",
                    peerValue: redis.restartRSS, goal: .ratioAtMost(1.0), decimals: 1),
            ]
        }
        table.compare(comparisons)
    }

    /// The figures both servers have, beside the table's row.
    struct Result {
        let fields: [Field]
        let restart: Double
        let snapshot: Double
        let rss: Double
        let restartRSS: Double
    }

    /// Redis holding the same files as values (`scene-N` → the file's bytes, loaded with pipelined `SET`s): its
    /// RSS, a `SAVE` (fsync'd, its RDB beside scenesync's state on `$TMPDIR`), then SIGTERM and a restart that is
    /// ready after loading that RDB.
    func measureRedis(scenes count: Int) throws(BenchError) -> Result {
        let (peer, socket) = try PeerProcess.redis(filesystem: .disk)
        defer { peer.cleanup() }
        let client = try RedisClient(path: socket)
        var rng = SplitMix64(seed: options.store.seed)
        let generator = SceneGenerator()
        var batch: [UInt8] = []
        var inBatch = 0
        let set = Array("SET".utf8)
        for index in 0..<count {
            RESP.append([set, Array("scene-\(index)".utf8), generator.file(&rng)], to: &batch)
            inBatch += 1
            if inBatch == 1000 || index == count - 1 {
                try client.pipeline(batch, count: inBatch)
                batch.removeAll(keepingCapacity: true)
                inBatch = 0
            }
        }
        let rss = ProcessStats.residentBytes(peer.pid)
        let anonymous = ProcessStats.anonymousBytes(peer.pid)
        let saveStart = Monotonic.now()
        _ = try client.command(["SAVE"])
        let save = Monotonic.seconds(Monotonic.now() - saveStart)
        let rdb = Self.fileSize(peer.directory + "/dump.rdb")
        let shutdown = try peer.stop()
        let restart = try peer.restart()
        let client2 = try RedisClient(path: socket)
        let keys = Int(String(decoding: try client2.command(["DBSIZE"]), as: UTF8.self)) ?? 0
        let restartRSS = ProcessStats.residentBytes(peer.pid)
        let restartAnonymous = ProcessStats.anonymousBytes(peer.pid)
        guard keys == count else { throw BenchError("redis restarted with \(keys) of \(count) keys") }
        let fields: [Field] = [
            .string("server", "server", "redis"),
            .int("scenes", "scenes", count),
            .number("RSS MB", "rss_mb", Double(rss) / 1_048_576, 1),
            .number("anon MB", "anon_mb", Double(anonymous) / 1_048_576, 1),
            .number("snapshot s", "snapshot_s", save, 3),
            .number("snapshot MB", "snapshot_mb", Double(rdb) / 1_048_576, 1),
            .number("shutdown s", "shutdown_s", shutdown, 3),
            .number("restart s", "restart_ready_s", restart, 3),
            .number("restart RSS MB", "restart_rss_mb", Double(restartRSS) / 1_048_576, 1),
            .number("restart anon MB", "restart_anon_mb", Double(restartAnonymous) / 1_048_576, 1),
        ]
        return Result(
            fields: fields, restart: restart, snapshot: save, rss: Double(rss) / 1_048_576,
            restartRSS: Double(restartRSS) / 1_048_576)
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    func measure(scenes count: Int, binary: String) throws(BenchError) -> Result {
        let daemon = try BenchDaemon(binary: binary, config: "snapshots:\n  keep: 3\n")
        defer { daemon.cleanup() }
        let fileBytes = try writeScenes(count, into: daemon.scenesDirectory)

        // Cold start: no snapshot, every file read and merged before READY.
        let ready = try daemon.start()
        let readyAt = Monotonic.now()
        let control = try ControlClient(path: daemon.socketPath)
        var listed = 0
        var listBytes = 0
        var listedAt = readyAt
        while listed < count, Monotonic.seconds(Monotonic.now() - readyAt) < 60 {
            let line = try control.requestLine("list")
            listedAt = Monotonic.now()
            listBytes = line.count
            listed = Self.count(#"{"scene":"#, in: line)
        }
        guard listed == count else { throw BenchError("only \(listed) of \(count) scenes listed") }
        let rss = ProcessStats.residentBytes(daemon.pid)
        let anonymous = ProcessStats.anonymousBytes(daemon.pid)

        var lists = Histogram<UInt64>.latency()
        for _ in 0..<5 {
            let start = Monotonic.now()
            _ = try control.requestLine("list")
            lists.record(nanoseconds: Monotonic.now() - start)
        }
        var gets = Histogram<UInt64>.latency()
        var rng = SplitMix64(seed: options.store.seed &+ 1)
        for _ in 0..<2000 {
            let fields = #","scene":"scene-\#(rng.below(count))""#
            let start = Monotonic.now()
            let line = try control.requestLine("get", fields)
            gets.record(nanoseconds: Monotonic.now() - start)
            guard line.starts(with: Array(#"{"id":"#.utf8)), line.count > 20 else { throw BenchError("bad get") }
        }

        let snapshotStart = Monotonic.now()
        let snapshot = try control.request("snapshot")
        let snapshotSeconds = Monotonic.seconds(Monotonic.now() - snapshotStart)
        let snapshotBytes = Int(snapshot["bytes"]?.uint64Value ?? 0)
        let rssAfterSnapshot = ProcessStats.residentBytes(daemon.pid)
        let cpu = ProcessStats.cpuSeconds(daemon.pid) ?? 0

        // Shutdown writes the final snapshot; the restart restores it and re-reads every file.
        let shutdown = try daemon.stop()
        let restart = try daemon.start()
        let control2 = try ControlClient(path: daemon.socketPath)
        let relisted = Self.count(#"{"scene":"#, in: try control2.requestLine("list"))
        let restartRSS = ProcessStats.residentBytes(daemon.pid)
        let restartAnonymous = ProcessStats.anonymousBytes(daemon.pid)
        try daemon.stop()
        guard relisted == count else { throw BenchError("after the restart only \(relisted) of \(count) scenes") }

        let fields: [Field] = [
            .string("server", "server", "scenesync"),
            .int("scenes", "scenes", count),
            .number("files MB", "files_mb", Double(fileBytes) / 1_048_576, 1),
            .number("ready s", "ready_s", ready, 3),
            .number("listed s", "listed_s", ready + Monotonic.seconds(listedAt - readyAt), 3),
            .number("start CPU s", "start_cpu_s", cpu, 2).jsonOnly,
            .number("RSS MB", "rss_mb", Double(rss) / 1_048_576, 1),
            .number("anon MB", "anon_mb", Double(anonymous) / 1_048_576, 1),
            .number("list ms", "list_ms", lists.milliseconds(at: 0.5), 2),
            .number("list MB", "list_mb", Double(listBytes) / 1_048_576, 2).jsonOnly,
            .number("get p50 ms", "get_p50_ms", gets.milliseconds(at: 0.5), 3),
            .number("get p99 ms", "get_p99_ms", gets.milliseconds(at: 0.99), 3),
            .number("snapshot s", "snapshot_s", snapshotSeconds, 3),
            .number("snapshot MB", "snapshot_mb", Double(snapshotBytes) / 1_048_576, 1),
            .number("RSS after snapshot MB", "rss_after_snapshot_mb", Double(rssAfterSnapshot) / 1_048_576, 1)
                .jsonOnly,
            .number("shutdown s", "shutdown_s", shutdown, 3),
            .number("restart s", "restart_ready_s", restart, 3),
            .number("restart RSS MB", "restart_rss_mb", Double(restartRSS) / 1_048_576, 1),
            .number("restart anon MB", "restart_anon_mb", Double(restartAnonymous) / 1_048_576, 1),
        ]
        return Result(
            fields: fields, restart: restart, snapshot: snapshotSeconds, rss: Double(rss) / 1_048_576,
            restartRSS: Double(restartRSS) / 1_048_576)
    }

    /// Writes `count` scene files as apps would (depth 1–8, 80 % codable); returns their total size.
    func writeScenes(_ count: Int, into directory: String) throws(BenchError) -> Int {
        var rng = SplitMix64(seed: options.store.seed)
        let generator = SceneGenerator()
        var total = 0
        for index in 0..<count {
            let bytes = generator.file(&rng)
            total += bytes.count
            try BenchDaemon.writeFile("\(directory)/scene-\(index).json", bytes)
        }
        return total
    }

    /// 100000 as 100,000.
    static func grouped(_ value: Int) -> String {
        let digits = Array(String(value))
        var out = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(digit)
        }
        return out
    }

    static func count(_ pattern: String, in line: ArraySlice<UInt8>) -> Int {
        let needle = Array(pattern.utf8)
        guard let first = needle.first, line.count >= needle.count else { return 0 }
        var found = 0
        var index = line.startIndex
        let last = line.endIndex - needle.count
        while index <= last {
            if line[index] == first, line[index..<(index + needle.count)].elementsEqual(needle) {
                found += 1
                index += needle.count
            } else {
                index += 1
            }
        }
        return found
    }
}
