import Logging
public import SceneSyncCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Re-reads the configuration for `SIGHUP` and the `reload` op, and applies what can change while running.
///
/// An invalid file is an error and the old configuration stays. Paths (scenes, state, socket) are fixed for the
/// life of the process; a changed path is reported in the log and takes effect at the next restart.
public final class Reloader: Sendable {
    let engine: Engine
    /// The connections' bounds, changed in place so open connections follow them at once (§8).
    let limits: ConnectionLimits
    let overrides: ConfigurationOverrides
    let environment: [String: String]
    let notifier: ReportedNotifier
    let logger: Logger
    private let current: Mutex<DaemonConfiguration>
    private let queue = ReloadQueue()

    init(
        engine: Engine, limits: ConnectionLimits, current: DaemonConfiguration, overrides: ConfigurationOverrides,
        environment: [String: String], notifier: ReportedNotifier, logger: Logger
    ) {
        self.engine = engine
        self.limits = limits
        self.current = Mutex(current)
        self.overrides = overrides
        self.environment = environment
        self.notifier = notifier
        self.logger = logger
    }

    /// Returns the error to report, or `nil` when the new configuration is in effect. Reloads run one at a time, in
    /// the order asked for (``ReloadQueue``).
    public func reload() async -> SceneSyncError? {
        await queue.run { await reloadNow() }
    }

    private func reloadNow() async -> SceneSyncError? {
        notifier.reloading()
        defer { notifier.readyAfterReload() }
        let loaded: DaemonConfiguration
        do {
            loaded = try await DaemonConfiguration.load(overrides: overrides, environment: environment, uid: getuid())
        } catch {
            logger.error("reload failed; keeping the previous configuration", metadata: ["error": "\(error)"])
            return SceneSyncError(.invalidConfig, "\(error)")
        }
        let previous = current.withLock { $0 }
        for (name, old, new) in [
            ("scenes.directory", previous.scenesDirectory, loaded.scenesDirectory),
            ("state.directory", previous.stateDirectory, loaded.stateDirectory),
            ("socket.path", previous.socketPath, loaded.socketPath),
        ] where old != new {
            logger.warning(
                "\(name) changed; it takes effect at the next restart", metadata: ["now": "\(old)", "new": "\(new)"])
        }
        if Reloader.clusterKeys(previous) != Reloader.clusterKeys(loaded) {
            logger.warning("cluster settings changed; they take effect at the next restart")
        }
        var applied = loaded
        applied.clusterPostgres = previous.clusterPostgres
        applied.clusterPasswordFile = previous.clusterPasswordFile
        applied.clusterHost = previous.clusterHost
        applied.clusterScenes = previous.clusterScenes
        applied.clusterSchema = previous.clusterSchema
        applied.clusterLogKeep = previous.clusterLogKeep
        applied.scenesDirectory = previous.scenesDirectory
        applied.stateDirectory = previous.stateDirectory
        applied.socketPath = previous.socketPath
        LogLevel.shared.set(applied.logLevel)
        limits.apply(applied)
        engine.apply(Daemon.settings(from: applied, environment: environment))
        current.withLock { $0 = applied }
        logger.info("configuration reloaded", metadata: ["file": "\(applied.configFile ?? "built-in defaults")"])
        return nil
    }

    /// The `cluster.*` settings, which a reload leaves as they are (§8).
    static func clusterKeys(_ configuration: DaemonConfiguration) -> [String] {
        [
            configuration.clusterPostgres?.description ?? "", configuration.clusterPasswordFile ?? "",
            configuration.clusterHost ?? "", configuration.clusterScenes.joined(separator: "\u{0}"),
            configuration.clusterSchema, String(configuration.clusterLogKeep),
        ]
    }
}
