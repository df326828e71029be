import ArgumentParser
import SceneSyncClient

/// `scenesync list`: every scene in a table.
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List every scene with its version, last change and depth.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let response = try await global.withConnection { try await $0.send(.list) }
        if global.json { return Output.json(response) }
        let list = try SceneList(response: response)
        var table = Table(["SCENE", "VERSION", "MODIFIED", "DEPTH"], rightAligned: [1, 2, 3])
        for entry in list.scenes {
            table.add([entry.scene.rawValue, "\(entry.version)", Format.revision(entry.modified), "\(entry.depth)"])
        }
        table.print()
    }
}
