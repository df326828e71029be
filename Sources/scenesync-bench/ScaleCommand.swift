import ArgumentParser

/// `scenesync-bench scale [--peers]`.
struct ScaleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scale",
        abstract: "Many scene files: start, RSS, list/get, snapshot, shutdown, restart.",
        discussion: "Peer: Redis holding the same files as values: RSS, SAVE, restart to ready after the RDB load.")

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also measure Redis with the same data and print scenesync/Redis ratios.")
    var peers = false

    @Option(help: ArgumentHelp("Scene counts, one run each.", valueName: "n,…"))
    var scenes = CountList([10_000, 100_000])

    @Option(help: ArgumentHelp("Seed of the generated scenes.", valueName: "n"))
    var seed: UInt64 = 1

    func run() throws {
        var options = common.benchOptions
        options.peers = peers
        options.store.scenes = scenes.values
        options.store.seed = seed
        try BenchSetup.prepare(&options)
        try ScaleBenchmark(options: options).run()
    }
}
