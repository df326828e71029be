import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync set SCENE JSON|-`: replaces a scene's path with what a scene file would hold.
struct SetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Replace a scene's path, creating the scene if needed.",
        discussion: """
            JSON is a scene file's content in either format, told apart as the daemon does: \
            NavigationPath.CodableRepresentation (["Swift.Int","42","MyApp.Recipe","{\\"applePie\\":{}}"], top of \
            the stack first) or a plain array ([1,2,3], root first). With --wire it is a wire path instead \
            ([{"type":"Swift.Int","value":42}], root first). "-" reads it from standard input.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Argument(help: ArgumentHelp("The path as JSON, or - for standard input.", valueName: "JSON|-"))
    var content: String

    @Flag(name: .long, help: "JSON is a wire path: [{\"type\": TAG, \"value\": VALUE}, ...], root first.")
    var wire = false

    @Option(
        name: .customLong("if-version"), help: "Only if the scene is at this version (0: only if it does not exist).")
    var ifVersion: UInt64?

    func run() async throws {
        let bytes = content == "-" ? try StandardInput.readAll() : Array(content.utf8)
        let request: SceneSyncRequest
        do throws(PathInput.Failure) {
            if wire {
                request = .set(scene, path: try PathInput.wirePath(bytes), ifVersion: ifVersion)
            } else {
                let file = try PathInput.sceneFile(bytes)
                request = .set(scene, path: file.path, format: file.format, ifVersion: ifVersion)
            }
        } catch {
            throw UsageError(message: "set: \(error)")
        }
        try await ChangeOutput.run(request, global: global)
    }
}
