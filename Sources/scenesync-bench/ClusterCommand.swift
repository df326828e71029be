import ArgumentParser

/// `scenesync-bench cluster`.
struct ClusterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cluster",
        abstract: "Three hosts and one PostgreSQL: file rename on host A → change on host B, beside NOTIFY's floor.",
        discussion: """
            Starts a private PostgreSQL (15 or newer, found with pg_config or in /usr/lib/postgresql; Unix socket only, as nobody when root) and \
            three scenesyncd hosts replicating through it. Per rate: PostgreSQL's own LISTEN/NOTIFY round trip \
            (the floor), then the latency from a rename on host A to the change on a subscriber of host B. Then the \
            changes/s that converge (a burst) and the time to converge after a database restart.
            """)

    @OptionGroup var common: CommonOptions

    @OptionGroup var measuring: DurationOption

    @Option(help: ArgumentHelp("Changes per second, one run each.", valueName: "n,…"))
    var rates = CountList([100, 1000])

    @Option(help: ArgumentHelp("Scene files the writes go round.", valueName: "n"))
    var files = 100

    @Option(help: ArgumentHelp("Changes of the unpaced burst that measures converged changes/s.", valueName: "n"))
    var burst = 5000

    func validate() throws {
        guard files > 0, burst > 0 else { throw ValidationError("--files and --burst must be positive") }
        guard common.socket == nil else { throw ValidationError("cluster starts its own hosts; no --socket") }
    }

    func run() throws {
        var options = common.benchOptions
        options.load.duration = measuring.duration
        options.cluster.rates = rates.values
        options.store.scenes = [files]
        options.cluster.burst = burst
        try BenchSetup.prepare(&options)
        try ClusterBenchmark(options: options).run()
    }
}
