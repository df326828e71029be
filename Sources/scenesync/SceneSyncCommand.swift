import ArgumentParser
import SceneSyncClient
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// `scenesync`: the command-line client of `scenesyncd` (§8).
///
/// A custom `main` maps every failure onto the contract's exit statuses, which ArgumentParser alone does not: 0 ok,
/// 1 the daemon answered with an error, 2 usage (ArgumentParser's own validation failures would be 64), 3 no daemon.
@main
struct SceneSyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenesync",
        abstract: "Talk to scenesyncd: inspect, change and watch the navigation state of an app's scenes.",
        discussion: """
            The daemon's socket is --socket, else $\(SceneSyncSocket.environmentVariable), else the daemon's default \
            for this user (/run/scenesync.sock as root, $XDG_RUNTIME_DIR/scenesync/scenesync.sock or \
            ~/.local/state/scenesync/scenesync.sock otherwise). --socket and --json go before or after the command.

            Exit status: 0 ok, 1 the daemon answered with an error (its code and message on stderr), 2 usage \
            (including JSON arguments that do not parse), 3 no daemon at the socket.
            """,
        version: "0.1.0",
        subcommands: [
            StatusCommand.self, ListCommand.self, GetCommand.self, SetCommand.self, PushCommand.self,
            PopCommand.self, DeleteCommand.self, WatchCommand.self, HistoryCommand.self, SnapshotCommand.self,
            PhaseCommand.self, ReloadCommand.self, MetricsCommand.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        throw ValidationError("missing command")
    }

    static func main() async {
        let status: Int32
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            status = 0
        } catch {
            status = report(error)
        }
        Glibc.exit(status)
    }

    /// Prints what went wrong and returns the exit status for it.
    static func report(_ error: any Error) -> Int32 {
        switch error {
        case let error as SceneSyncError:
            Output.error("\(error.code.rawValue): \(error.message)")
            return 1
        case let error as SceneSyncConnectionError:
            Output.error(error.description)
            return 3
        case let error as UsageError:
            Output.error(error.message)
            return 2
        default:
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                // --help, --version, --generate-completion-script.
                if !message.isEmpty { Output.line(message) }
                return 0
            }
            if !message.isEmpty { Output.errorLine(message) }
            return code == .validationFailure ? 2 : code.rawValue
        }
    }
}
