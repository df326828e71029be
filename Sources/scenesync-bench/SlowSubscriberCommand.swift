import ArgumentParser

/// `scenesync-bench slow-subscriber` (no peer: Redis disconnects a slow subscriber instead).
struct SlowSubscriberCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slow-subscriber",
        abstract: "100 subscribers with and without one that stops reading.")

    @OptionGroup var common: CommonOptions

    @Option(help: ArgumentHelp("Seconds per measured run.", valueName: "s"))
    var duration = 5.0

    @Option(help: ArgumentHelp("Healthy subscribers.", valueName: "n"))
    var subscribers = 100

    @Option(help: ArgumentHelp("Changes per second.", valueName: "n"))
    var rate = 2000

    func validate() throws {
        guard duration > 0, duration <= 3600 else { throw ValidationError("--duration needs 0 < s ≤ 3600") }
        guard rate > 0, subscribers > 0 else { throw ValidationError("--rate and --subscribers must be positive") }
    }

    func run() throws {
        var options = common.benchOptions
        options.duration = duration
        options.subscribers = [subscribers]
        options.rate = rate
        try BenchSetup.prepare(&options)
        try SlowSubscriberBenchmark(options: options).run()
    }
}
