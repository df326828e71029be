import ArgumentParser

/// The options every scenario that drives a daemon understands.
struct CommonOptions: ParsableArguments {
    @Flag(help: "One JSON object per result instead of a table.")
    var json = false

    @Option(
        help: ArgumentHelp("Subscriber reader threads (default: one per 250 subscribers, at most 4).", valueName: "n"))
    var threads: Int?

    @Option(
        help: ArgumentHelp(
            "Drive the daemon listening there instead of starting one (not for scale, not with --peers).",
            valueName: "path"))
    var socket: String?

    @Option(
        name: .customLong("scenes-dir"),
        help: ArgumentHelp("With --socket: that daemon's scenes directory.", valueName: "dir"))
    var scenesDirectory: String?

    @Option(
        help: ArgumentHelp(
            "The scenesyncd to start (default: the one beside this executable, rebuilt first).", valueName: "path"))
    var daemon: String?

    @Flag(name: .customLong("no-build"), help: "Do not run swift build for scenesyncd first.")
    var noBuild = false

    func validate() throws {
        if let threads, threads <= 0 { throw ValidationError("--threads needs a positive number") }
        if scenesDirectory != nil, socket == nil { throw ValidationError("--scenes-dir goes with --socket") }
    }

    /// The scenario settings these options give, before the scenario's own.
    var benchOptions: BenchOptions {
        var options = BenchOptions()
        options.json = json
        options.load.threads = threads
        options.daemon.socket = socket
        options.daemon.scenesDirectory = scenesDirectory
        options.daemon.executable = daemon
        options.daemon.build = !noBuild
        return options
    }
}
