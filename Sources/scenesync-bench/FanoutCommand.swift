import ArgumentParser

/// `scenesync-bench fanout [--peers]`.
struct FanoutCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fanout",
        abstract: "Pipelined sets on one scene to 1, 10, 100, 1000 subscribers; then a paced run.",
        discussion: "Peer: Redis, PUBLISH to N SUBSCRIBErs with the same writer, window and readers.")

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also measure Redis pub/sub and print scenesync/Redis ratios.")
    var peers = false

    @OptionGroup var measuring: DurationOption

    @Option(help: ArgumentHelp("Subscriber counts of the saturated runs.", valueName: "n,…"))
    var subscribers = CountList([1, 10, 100, 1000])

    @Option(help: ArgumentHelp("Changes per second of the paced run (100 subscribers).", valueName: "n"))
    var rate = 2000

    @Option(help: ArgumentHelp("Changes the writer may be ahead of the slowest subscriber.", valueName: "n"))
    var window = 8192

    func validate() throws {
        guard rate > 0, window > 0 else { throw ValidationError("--rate and --window must be positive") }
    }

    func run() throws {
        var options = common.benchOptions
        options.peers = peers
        options.load.duration = measuring.duration
        options.load.subscribers = subscribers.values
        options.load.rate = rate
        options.load.window = window
        try BenchSetup.prepare(&options)
        try FanoutBenchmark(options: options).run()
    }
}
