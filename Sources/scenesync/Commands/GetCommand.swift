import ArgumentParser
import SceneSyncClient

/// `scenesync get SCENE`: one scene, its versions and its path, one element per line.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Show one scene: versions, format and path (root first).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    func run() async throws {
        let response = try await global.withConnection { try await $0.send(.get(scene)) }
        if global.json { return Output.json(response) }
        let state = try FetchedScene(response: response).scene
        let rows = [
            ("scene", state.id.rawValue), ("version", "\(state.version)"),
            ("created", Format.revision(state.created)), ("modified", Format.revision(state.modified)),
            ("format", state.format.rawValue), ("depth", "\(state.depth)"),
        ]
        for (key, value) in rows {
            Output.line(key + String(repeating: " ", count: 10 - key.count) + value)
        }
        if !state.path.isEmpty { Output.line("path      (root first)") }
        let width = String(state.path.count - 1).count
        for (index, element) in state.path.enumerated() {
            let number = String(index)
            Output.line(
                "  " + String(repeating: " ", count: width - number.count) + number + "  " + Format.element(element))
        }
    }
}
