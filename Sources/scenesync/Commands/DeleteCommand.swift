import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync delete SCENE`: removes a scene and its file.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete", abstract: "Delete a scene and its scene file.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Option(name: .customLong("if-version"), help: "Only if the scene is at this version.")
    var ifVersion: UInt64?

    func run() async throws {
        let response = try await global.withConnection { connection in
            try await connection.hello(client: "scenesync")
            return try await connection.send(.delete(scene, ifVersion: ifVersion))
        }
        if global.json { return Output.json(response) }
        let revision = response["revision"]?.uint64Value.map(Format.revision) ?? "?"
        Output.line("deleted \(scene) (\(revision))")
    }
}
