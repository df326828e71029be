import ArgumentParser

/// `scenesync-bench core`: the store alone, no daemon.
struct CoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "core",
        abstract: "SceneStore merge cost (plan+commit, applyFile) and memory per scene (no daemon).")

    @Flag(help: "One JSON object per result instead of a table.")
    var json = false

    @Option(help: ArgumentHelp("Scenes in the store.", valueName: "n"))
    var scenes = 100_000

    @Option(help: ArgumentHelp("Timed operations per measurement.", valueName: "n"))
    var operations = 20_000

    @Option(help: ArgumentHelp("Seed of the generated scenes.", valueName: "n"))
    var seed: UInt64 = 1

    func validate() throws {
        guard scenes > 0, operations > 0 else { throw ValidationError("--scenes and --operations must be positive") }
    }

    func run() throws {
        var options = BenchOptions()
        options.json = json
        options.store.scenes = [scenes]
        options.store.operations = operations
        options.store.seed = seed
        try BenchSetup.prepare(&options, needsDaemon: false)
        CoreBenchmark(options: options).run()
    }
}
