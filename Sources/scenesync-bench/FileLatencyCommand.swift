import ArgumentParser

/// `scenesync-bench file-latency [--peers]`.
struct FileLatencyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "file-latency",
        abstract: "Scene files replaced atomically at a steady rate; latency to 1 and 100 subscribers.",
        discussion: "Peers: watchman (subscription, settle 0) and a raw inotify relay, on the same files.")

    @OptionGroup var common: CommonOptions

    @Flag(help: "Also measure watchman and a raw inotify relay, and print scenesync/peer ratios.")
    var peers = false

    @OptionGroup var measuring: DurationOption

    @Option(help: ArgumentHelp("Subscriber counts, one run each.", valueName: "n,…"))
    var subscribers = CountList([1, 100])

    @Option(help: ArgumentHelp("File writes per second.", valueName: "n"))
    var rate = 1000

    @Option(help: ArgumentHelp("Scene files the writes go round.", valueName: "n"))
    var files = 100

    @Option(help: ArgumentHelp("Where the scene files live (repeat for both: tmpfs, disk).", valueName: "fs"))
    var filesystem: [Filesystem] = [.tmpfs]

    func validate() throws {
        guard rate > 0, files > 0 else { throw ValidationError("--rate and --files must be positive") }
    }

    func run() throws {
        var options = common.benchOptions
        options.peers = peers
        options.load.duration = measuring.duration
        options.load.subscribers = subscribers.values
        options.load.rate = rate
        options.store.scenes = [files]
        options.filesystems = filesystem
        try BenchSetup.prepare(&options)
        try FileLatencyBenchmark(options: options).run()
    }
}
