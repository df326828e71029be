import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync phase SCENE PHASE`: reports a scene's lifecycle phase, as an app would.
struct PhaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phase",
        abstract: "Report a scene's phase: active, inactive or background.",
        discussion: "background makes the daemon write a snapshot; the command returns once it is written.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Argument(
        help: ArgumentHelp("active, inactive or background.", valueName: "PHASE"),
        transform: { text in
            guard let phase = ScenePhase(rawValue: text) else {
                throw ValidationError("PHASE must be active, inactive or background, not \(text)")
            }
            return phase
        })
    var phase: ScenePhase

    func run() async throws {
        let response = try await global.withConnection { connection in
            try await connection.hello(client: "scenesync")
            return try await connection.send(.phase(scene, phase))
        }
        if global.json { return Output.json(response) }
        Output.line("\(scene) \(phase.rawValue)")
        if let snapshot = response["snapshot"], snapshot != .null {
            Output.line(Format.snapshot(try SnapshotInfo(response: snapshot)))
        }
    }
}
