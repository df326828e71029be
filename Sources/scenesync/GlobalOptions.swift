import ArgumentParser
import SceneSyncClient

/// `--socket` and `--json`, accepted before or after the command: the root command and every subcommand include this
/// group, and ArgumentParser fills a subcommand's copy from either position.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The daemon's control socket (default: $\(SceneSyncSocket.environmentVariable), else the daemon's default).",
            valueName: "PATH"))
    var socket: String?

    @Flag(name: .long, help: "Print one JSON object per line (the daemon's answers and events) instead of text.")
    var json = false

    var socketPath: String { socket ?? SceneSyncSocket.defaultPath() }

    /// Runs `body` on a connection to the daemon.
    func withConnection<Result: Sendable>(
        _ body: (SceneSyncConnection) async throws -> Result
    ) async throws -> Result {
        try await SceneSyncConnection.withConnection(to: socketPath, body)
    }
}
