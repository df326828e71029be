import ArgumentParser
import SceneSyncClient

/// `scenesync snapshot`: writes a snapshot now, e.g. before maintenance.
struct SnapshotCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot", abstract: "Write a snapshot of every scene now.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let response = try await global.withConnection { connection in
            try await connection.hello(client: "scenesync")
            return try await connection.send(.snapshot)
        }
        if global.json { return Output.json(response) }
        Output.line(Format.snapshot(try SnapshotInfo(response: response)))
    }
}
