import ArgumentParser

/// `scenesync-bench all [--peers]`: every scenario in turn with short runs, the figures of docs/benchmarks.md.
struct AllCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "all",
        abstract: "Every scenario in turn with short runs (a few minutes in all).",
        discussion: """
            file-latency on tmpfs and disk (1 and 100 subscribers), fanout (1, 10, 100, 1000 subscribers and the \
            paced run), scale (10,000 and 100,000 scenes), slow-subscriber and core.
            """)

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also measure the peers and print scenesync/peer ratios.")
    var peers = false

    @OptionGroup var measuring: DurationOption

    @Option(help: ArgumentHelp("Scenes of the scale scenario's larger run (the smaller has 10,000).", valueName: "n"))
    var scenes = 100_000

    func validate() throws {
        guard scenes > 0 else { throw ValidationError("--scenes must be positive") }
    }

    func run() throws {
        var options = common.benchOptions
        options.peers = peers
        guard options.daemon.socket == nil else { throw ValidationError("all starts its own daemons; no --socket") }
        try BenchSetup.prepare(&options)

        var latency = options
        latency.load.duration = measuring.duration ?? 3
        latency.filesystems = [.tmpfs, .disk]
        try FileLatencyBenchmark(options: latency).run()

        var fanout = options
        fanout.load.duration = measuring.duration ?? 3
        try FanoutBenchmark(options: fanout).run()

        var scale = options
        scale.store.scenes = scenes > 10_000 ? [10_000, scenes] : [scenes]
        try ScaleBenchmark(options: scale).run()

        var slow = options
        slow.load.duration = measuring.duration ?? 3
        slow.peers = false
        try SlowSubscriberBenchmark(options: slow).run()

        var core = options
        core.store.scenes = [scenes]
        CoreBenchmark(options: core).run()
    }
}
