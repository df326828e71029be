import ArgumentParser
import CDaemonSignals
import Foundation
import Logging
import SceneSyncCore
import SceneSyncDaemon
import SceneSyncReplication

/// The process entry: deliberately synchronous.
///
/// An `async` main parks the main thread in `dispatch_main()`, which waits in `sigsuspend()` with an empty mask:
/// that thread would then take `SIGUSR1`, `SIGHUP` and `SIGTERM` by their default action, which ends the process.
/// Here the main thread keeps the mask the `CDaemonSignals` constructor set and sleeps, the command runs on the
/// concurrency pool, and only the daemon's signal thread ever receives those signals (§7).
@main
enum ScenesyncdMain {
    static func main() {
        Task.detached {
            await ScenesyncdCommand.main()
            exit(0)
        }
        // With every handled signal blocked, pause() never returns; the task above ends the process.
        while true { pause() }
    }
}

/// `scenesyncd`: parses flags, loads the configuration, and runs ``Daemon``. Everything else lives in the library.
struct ScenesyncdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenesyncd",
        abstract: "Keeps the navigation state of multi-window apps in sync.",
        discussion: "Watches a directory of scene files, versions every change and serves them over a Unix socket.")

    @Option(name: .long, help: ArgumentHelp("Configuration file (YAML).", valueName: "FILE"))
    var config: String?

    @Option(name: .customLong("scenes-dir"), help: ArgumentHelp("Directory of scene files.", valueName: "DIR"))
    var scenesDirectory: String?

    @Option(name: .customLong("state-dir"), help: ArgumentHelp("Directory for snapshots and state.", valueName: "DIR"))
    var stateDirectory: String?

    @Option(name: .long, help: ArgumentHelp("Control socket path.", valueName: "PATH"))
    var socket: String?

    @Option(
        name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error or critical."))
    var logLevel: String?

    @Flag(name: .customLong("check-config"), help: "Validate the configuration and exit (0 valid, 1 invalid).")
    var checkConfig = false

    @Flag(name: .long, help: "Print the version and exit.")
    var version = false

    func run() async throws {
        if version {
            print(SceneSyncVersion.line(for: "scenesyncd"))
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let overrides = ConfigurationOverrides(
            configFile: config, scenesDirectory: scenesDirectory, stateDirectory: stateDirectory, socketPath: socket,
            logLevel: logLevel)
        let configuration: DaemonConfiguration
        do {
            configuration = try await DaemonConfiguration.load(
                overrides: overrides, environment: environment, uid: getuid())
        } catch {
            FileHandle.standardError.write(Data("scenesyncd: invalid configuration: \(error)\n".utf8))
            throw ExitCode(1)
        }
        if checkConfig {
            print("scenesyncd: configuration is valid (\(configuration.configFile ?? "built-in defaults"))")
            return
        }
        LogLevel.shared.set(configuration.logLevel)
        let journald = StderrLogHandler.isJournald(environment: environment)
        LoggingSystem.bootstrap { label in
            StderrLogHandler(label: label, following: LogLevel.shared, journald: journald)
        }
        let logger = Logger(label: "scenesyncd")
        if scenesync_daemon_signals_blocked_at_start() == 0 {
            logger.warning("could not block signals at start; one that arrives early may act by default")
        }
        do {
            try await Daemon(
                configuration: configuration, overrides: overrides, environment: environment, logger: logger,
                replication: { engine, configuration, logger in
                    try ClusterReplicator(
                        engine: engine, configuration: configuration, stateDirectory: configuration.stateDirectory,
                        logger: logger)
                }
            ).run()
        } catch let error as Daemon.StartupError {
            FileHandle.standardError.write(Data("scenesyncd: \(error.description)\n".utf8))
            throw ExitCode(1)
        }
    }
}
