import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync pop SCENE [--count N | --root]`: goes back in a scene's stack.
struct PopCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pop", abstract: "Pop elements off the top of a scene's stack.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Option(name: .long, help: ArgumentHelp("How many elements to pop (default 1).", valueName: "N"))
    var count: UInt64?

    @Flag(name: .long, help: "Pop everything, back to the root view.")
    var root = false

    @Option(name: .customLong("if-version"), help: "Only if the scene is at this version.")
    var ifVersion: UInt64?

    func validate() throws {
        if root, count != nil { throw ValidationError("give either --count or --root, not both") }
    }

    func run() async throws {
        let request: SceneSyncRequest =
            root ? .popToRoot(scene, ifVersion: ifVersion) : .pop(scene, count: count ?? 1, ifVersion: ifVersion)
        try await ChangeOutput.run(request, global: global)
    }
}
