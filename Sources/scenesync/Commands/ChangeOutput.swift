import SceneSyncClient
import SceneSyncCore

/// The shared end of `set`, `push` and `pop`: send as client `scenesync` (so watchers see who changed the scene)
/// and print the new version.
enum ChangeOutput {
    static func run(_ request: SceneSyncRequest, global: GlobalOptions) async throws {
        let response = try await global.withConnection { connection in
            try await connection.hello(client: "scenesync")
            return try await connection.send(request)
        }
        if global.json { return Output.json(response) }
        let result = try ChangeResult(response: response)
        Output.line("\(result.scene) v\(result.version) (\(Format.revision(result.revision)))")
    }
}
