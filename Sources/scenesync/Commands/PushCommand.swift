import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync push SCENE VALUE_JSON… [--type TAG]`: pushes views on top of a scene's stack.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Push elements on top of a scene's stack, creating the scene if needed.",
        discussion: """
            Each VALUE_JSON is one element's value as a JSON text, the first pushed first: 42, '"text"', \
            '{"applePie":{}}'. With --type every element gets that type name (a codable scene, e.g. MyApp.Recipe); \
            without it they are an array scene's plain values.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Argument(help: ArgumentHelp("The values to push, each a JSON text.", valueName: "VALUE_JSON"))
    var values: [String] = []

    @Option(name: .long, help: ArgumentHelp("The type name of every pushed element.", valueName: "TAG"))
    var type: String?

    @Option(
        name: .customLong("if-version"), help: "Only if the scene is at this version (0: only if it does not exist).")
    var ifVersion: UInt64?

    func validate() throws {
        if values.isEmpty { throw ValidationError("push needs at least one VALUE_JSON") }
        if let type, type.isEmpty { throw ValidationError("--type must not be empty") }
    }

    func run() async throws {
        let elements: [SceneSyncCore.Element]
        do throws(PathInput.Failure) {
            elements = try PathInput.values(values, type: type)
        } catch {
            throw UsageError(message: "push: \(error)")
        }
        try await ChangeOutput.run(.push(scene, elements: elements, ifVersion: ifVersion), global: global)
    }
}
