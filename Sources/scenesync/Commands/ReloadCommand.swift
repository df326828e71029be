import ArgumentParser
import SceneSyncClient

/// `scenesync reload`: the systemd unit's `ExecReload`.
///
/// It returns only once the daemon has re-read and applied its configuration (the `reload` op answers then), which a
/// `kill -HUP` cannot promise; a bad file makes it fail (`invalid_config`, exit status 1) and the old configuration
/// stays.
struct ReloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Make the daemon re-read its configuration; returns when the reload is done.",
        discussion: "Exits with status 1 (invalid_config) when the file is invalid; the daemon keeps the old one.")

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let response = try await global.withConnection { connection in
            try await connection.hello(client: "scenesync")
            return try await connection.send(.reload)
        }
        if global.json { return Output.json(response) }
        Output.line("reloaded the configuration")
    }
}
