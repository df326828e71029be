import ArgumentParser
import SceneSyncClient
import SceneSyncCore

/// `scenesync history SCENE [--limit N]`: a scene's recent changes, newest first.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show a scene's recent changes, newest first.",
        discussion: "History is kept in memory: it starts empty each time the daemon starts.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The scene ID.")
    var scene: String

    @Option(name: .long, help: ArgumentHelp("Show at most N changes.", valueName: "N"))
    var limit: UInt64?

    func run() async throws {
        let response = try await global.withConnection { try await $0.send(.history(scene, limit: limit)) }
        if global.json { return Output.json(response) }
        guard let records = response["records"]?.arrayValue else {
            throw SceneSyncConnectionError.protocolViolation("history response has no records")
        }
        var table = Table(["REVISION", "KIND", "VERSION", "ORIGIN", "PATH"], rightAligned: [0, 2])
        for json in records {
            let record: ChangeRecord
            do {
                record = try Wire.decodeChange(json)
            } catch {
                throw SceneSyncConnectionError.protocolViolation("history record: \(error.message)")
            }
            var path = record.path.map(Format.path) ?? "-"
            if let conflict = record.conflict {
                path += " (conflict: overwrote \(Format.path(conflict.path)) from \(Format.origin(conflict.origin)))"
            }
            table.add([
                Format.revision(record.clock.revision), record.kind.rawValue, "\(record.version)",
                Format.origin(record.origin), path,
            ])
        }
        table.print()
    }
}
