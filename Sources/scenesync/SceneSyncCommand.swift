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
            (including JSON arguments that do not parse), 3 no daemon at the socket, 4 `wait` timed out. With \
            --json, errors are one JSON object on stderr: {"error":{"code":…,"message":…}}, with "current" for a \
            conflict.
            """,
        version: SceneSyncVersion.line(for: "scenesync"),
        subcommands: [
            StatusCommand.self, ListCommand.self, GetCommand.self, SetCommand.self, PushCommand.self,
            PopCommand.self, DeleteCommand.self, WatchCommand.self, HistoryCommand.self, SnapshotCommand.self,
            PhaseCommand.self, ReloadCommand.self, MetricsCommand.self, SyncCommand.self, WaitCommand.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        throw ValidationError("missing command")
    }

    static func main() async {
        let status: Int32
        let jsonErrors = wantsJSONErrors()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            status = 0
        } catch {
            status = report(error, json: jsonErrors)
        }
        Glibc.exit(status)
    }

    /// Whether `--json` was given: from a parse of its own, so that the command that runs is not shared; when the
    /// arguments do not parse (a usage error), from the arguments themselves.
    static func wantsJSONErrors() -> Bool {
        do {
            return ((try parseAsRoot()) as? any GlobalCommand)?.global.json ?? false
        } catch {
            return CommandLine.arguments.dropFirst().contains("--json")
        }
    }

    /// Prints what went wrong and returns the exit status for it. With `json`, the error is one JSON object on
    /// stderr, `{"error":{"code":…,"message":…}}` (with `current` for a conflict), so that scripts that read the
    /// answers as JSON read failures the same way.
    static func report(_ error: any Error, json: Bool) -> Int32 {
        switch error {
        case let error as SceneSyncError:
            if json { Output.jsonError(error) } else { Output.error("\(error.code.rawValue): \(error.message)") }
            return 1
        case let error as SceneSyncConnectionError:
            if json {
                Output.jsonError(code: error.code, message: error.description)
            } else {
                Output.error(error.description)
            }
            return 3
        case let error as UsageError:
            if json { Output.jsonError(code: "usage", message: error.message) } else { Output.error(error.message) }
            return 2
        case let error as WaitTimedOut:
            if json {
                Output.jsonError(code: "timed_out", message: error.description)
            } else {
                Output.error(error.description)
            }
            return 4
        default:
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                // --help, --version, --generate-completion-script.
                if !message.isEmpty { Output.line(message) }
                return 0
            }
            if json, code == .validationFailure {
                Output.jsonError(code: "usage", message: message)
            } else if !message.isEmpty {
                Output.errorLine(message)
            }
            return code == .validationFailure ? 2 : code.rawValue
        }
    }
}
