import ArgumentParser

/// `scenesync-bench slow-subscriber` (no peer: Redis disconnects a slow subscriber instead).
struct SlowSubscriberCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slow-subscriber",
        abstract: "100 subscribers with and without one that stops reading.")

    @OptionGroup var common: CommonOptions

    @OptionGroup var measuring: DurationOption

    @Option(help: ArgumentHelp("Healthy subscribers.", valueName: "n"))
    var subscribers = 100

    @Option(help: ArgumentHelp("Changes per second.", valueName: "n"))
    var rate = 2000

    func validate() throws {
        guard rate > 0, subscribers > 0 else { throw ValidationError("--rate and --subscribers must be positive") }
    }

    func run() throws {
        var options = common.benchOptions
        options.load.duration = measuring.duration
        options.load.subscribers = [subscribers]
        options.load.rate = rate
        try BenchSetup.prepare(&options)
        try SlowSubscriberBenchmark(options: options).run()
    }
}
