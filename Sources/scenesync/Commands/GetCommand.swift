import ArgumentParser
import SceneSyncClient

/// `scenesync get SCENE`: one scene, its versions, its last reported phase and its path, one element per line.
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Show one scene: versions, format, last reported phase and path (root first).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Flag(
        name: .long,
        help:
            "Print the scene file's bytes, as the daemon has merged them (root last in a codable file), and nothing else."
    )
    var raw = false

    func run() async throws {
        if raw { return try await printFile() }
        let response = try await global.withConnection { try await $0.send(.get(scene)) }
        if global.json { return Output.json(response) }
        let state = try FetchedScene(response: response).scene
        var rows = [
            ("scene", state.id.rawValue), ("version", "\(state.version)"),
            ("created", Format.revision(state.created)), ("modified", Format.revision(state.modified)),
            ("format", state.format.rawValue), ("depth", "\(state.depth)"),
        ]
        // Only when one was reported: a scene without a phase reads as it always did.
        if let phase = state.phase { rows.append(("phase", phase.rawValue)) }
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

    /// The file as it is on disk once the daemon has merged every earlier write (`sync` first): what `cat` shows,
    /// but only for a scene the daemon knows. When the file cannot be read (another user's directory), the bytes the
    /// daemon would write for the scene.
    private func printFile() async throws {
        let (state, directory) = try await global.withConnection { connection in
            let directory = try await connection.hello(client: "scenesync get").scenesDirectory
            _ = try await connection.sync()
            return (try await connection.get(scene).scene, directory)
        }
        let bytes = directory.flatMap { FileBytes.read($0 + "/" + scene + ".json") } ?? state.fileBytes
        Output.raw(bytes)
    }
}
