import CSystemd  // <sys/socket.h> constants (SOCK_STREAM, SOCK_CLOEXEC) for the live-socket probe
public import Logging
import SceneSyncCore
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Builds and runs the daemon from a configuration: the testable part of `scenesyncd`'s `main`.
///
/// Start-up order matters: the state directory is locked before anything else is touched (a second daemon fails
/// without side effects), the watcher is started before the directory is scanned (no write can fall between; the
/// scan runs while the snapshot is decoded), and `READY=1` is sent only once the socket listens on a fully merged
/// state.
public struct Daemon: Sendable {
    public let configuration: DaemonConfiguration
    let overrides: ConfigurationOverrides
    let environment: [String: String]
    let logger: Logger
    let replication: ReplicationFactory?

    /// Builds replication across hosts (§9) when `cluster.postgres` is set. The daemon's library does not depend on
    /// the database client: `scenesyncd` passes the factory of its replication target.
    public typealias ReplicationFactory =
        @Sendable (Engine, DaemonConfiguration, Logger) throws -> any ChangeReplicator & Service

    public init(
        configuration: DaemonConfiguration, overrides: ConfigurationOverrides, environment: [String: String],
        logger: Logger, replication: ReplicationFactory? = nil
    ) {
        self.configuration = configuration
        self.overrides = overrides
        self.environment = environment
        self.logger = logger
        self.replication = replication
    }

    /// A start-up failure: one line naming the problem, exit status 1.
    public struct StartupError: Error, CustomStringConvertible {
        public var description: String
    }

    static func settings(from configuration: DaemonConfiguration, environment: [String: String]) -> EngineSettings {
        #if SCENESYNC_TEST_HOOKS
        let testHooks = environment["SCENESYNC_TEST_HOOKS"] == "1"
        let revisionBlock =
            testHooks ? environment["SCENESYNC_TEST_REVISION_BLOCK"].flatMap { UInt64($0) }.map { max($0, 1) } : nil
        #else
        // Release builds (`make run`, the package) carry no test hooks: no environment changes how they write files.
        let testHooks = false
        let revisionBlock: UInt64? = nil
        #endif
        var settings = EngineSettings(
            scenesDirectory: configuration.scenesDirectory,
            codec: SceneFileCodec(
                policy: configuration.format, maxFileBytes: configuration.maxFileBytes,
                maxDepth: configuration.maxDepth),
            restoreMissing: configuration.restoreMissing, snapshotsKeep: configuration.snapshotsKeep,
            historyLimit: configuration.historyMaxRevisions,
            writeUIDs: Set(configuration.writeUIDs), writeGIDs: Set(configuration.writeGIDs),
            writeWait: configuration.writeWait, testHooks: testHooks)
        if let revisionBlock { settings.revisionBlock = revisionBlock }
        return settings
    }

    public func run() async throws {
        // Before the restore allocates anything large (see the type).
        StartupMemory.keepLargeBlocksMapped()
        StartupMemory.limitArenas()
        // Then: every signal of §7 is taken by this thread from now on and never acts by default. The executable
        // blocked them before any thread existed; this covers a daemon run from the library alone.
        let signals = SignalReceiver()
        do throws(SystemError) {
            try signals.start()
        } catch {
            throw StartupError(description: "cannot start the signal thread: \(error)")
        }
        // The thread ends with the daemon (also when it fails to start): stopping wakes it, so the join is brief.
        defer { signals.stop() }
        let notifier = ReportedNotifier(SystemdNotifier(environment: environment), logger: logger)
        let settings = Daemon.settings(from: configuration, environment: environment)
        let limits = ConnectionLimits(configuration)

        // First of all the checks: a malformed socket-activation environment is reported as itself, before the
        // preflight could refuse the configured socket's directory instead, and before the state directory is locked.
        let inherited: Int32?
        do throws(SocketActivationError) {
            inherited = try SocketActivation.controlSocket(environment: environment)
        } catch {
            throw StartupError(description: "socket activation: \(error)")
        }
        try Daemon.preflight(configuration, socketActivated: inherited != nil)
        let stateDirectory: StateDirectory
        do throws(StateDirectoryError) {
            stateDirectory = try StateDirectory(path: configuration.stateDirectory)
        } catch {
            throw StartupError(description: "\(error)")
        }
        do throws(SystemError) {
            try FileSystem.makeDirectory(configuration.scenesDirectory, mode: 0o755)
        } catch {
            throw StartupError(description: "scenes directory unusable: \(error)")
        }
        let listener = try Daemon.listener(for: configuration, inherited: inherited)

        notifier.extendTimeout(.seconds(90))
        // The engine's thread first, and the watch on it, before the directory is listed: the restore lists it
        // while it decodes the snapshot, and the events of every write after the listing wait for the engine there.
        let loop = EngineLoop()
        let scenesDirectory = configuration.scenesDirectory
        let engine: Engine
        let scan: StartupScan
        let watcher: InotifyWatcher
        do throws(SceneSyncError) {
            (engine, scan, watcher) = try await Engine.restore(
                settings: settings, stateDirectory: stateDirectory, logger: logger, loop: loop,
                watch: { () throws(SceneSyncError) -> InotifyWatcher in
                    do throws(WatcherError) {
                        return try InotifyWatcher(directory: scenesDirectory, eventLoop: loop.eventLoop)
                    } catch {
                        throw SceneSyncError(.unavailable, "cannot watch \(scenesDirectory): \(error)")
                    }
                }, limits: limits)
        } catch {
            throw StartupError(description: error.message)
        }
        var replicationServices: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if configuration.clusterPostgres != nil, let replication {
            do {
                let replicator = try replication(engine, configuration, logger)
                // Before the start-up merge, so the changes it finds are pushed too.
                engine.attach(replicator: replicator)
                replicationServices.append(.init(service: replicator))
            } catch {
                throw StartupError(description: "cluster: \(error)")
            }
        }
        let reloader = Reloader(
            engine: engine, limits: limits, current: configuration, overrides: overrides, environment: environment,
            notifier: notifier, logger: logger)
        engine.setReloadHandler { await reloader.reload() }

        let driverBox = DriverBox()
        let server = ControlServer(
            engine: engine, listener: listener, limits: limits, logger: logger,
            shutdownPolicy: ShutdownClosePolicy.from(environment: environment, testHooks: settings.testHooks),
            testFaults: ServerTestFaults.from(environment: environment, testHooks: settings.testHooks)
        ) {
            notifier.ready()
            logger.info(
                "ready",
                metadata: [
                    "scenes": "\(configuration.scenesDirectory)", "state": "\(configuration.stateDirectory)",
                    "socket": "\(listener)",
                ])
            await driverBox.driver?.ready()
        }
        let watchdog = notifier.watchdogInterval.map { $0 / 2 }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: server)
                ] + replicationServices + [
                    .init(
                        service: WatcherService(
                            engine: engine, directory: configuration.scenesDirectory, watcher: watcher, logger: logger)),
                    .init(
                        service: HousekeepingService(
                            engine: engine, limits: limits,
                            watchdogInterval: watchdog, pingWatchdog: { notifier.watchdogPing() })),
                    .init(service: EngineService(engine: engine)),
                    // Last, so it is the first to see the shutdown: STOPPING=1 before the final snapshot.
                    .init(service: StoppingNotice(notifier: notifier, logger: logger)),
                ],
                logger: logger))
        let driver = LifecycleDriver(engine: engine, group: group, logger: logger) { _ = await reloader.reload() }
        driverBox.driver = driver
        // The box, the driver and the group hold each other (the socket's readiness callback reaches the driver).
        defer { driverBox.driver = nil }
        // The signal loop is a child of this call, and the engine's work off its thread is waited for before it
        // returns (``Engine/quiesce()``): none outlives the daemon. The services and every task those start run
        // on the engine's loop, so calling the engine is no thread hop.
        try await withTaskExecutorPreference(engine.loop.taskExecutor) {
            try await withThrowingDiscardingTaskGroup { children in
                // Signals are taken from here on, during the start-up merge too: the lifecycle defers them until ready.
                children.addTask { await driver.run(signals.signals) }
                let outcome: Result<Void, any Error>
                do {
                    await engine.mergeDirectory(scan)
                    // After the merge: the first STATUS= (sent at once, before READY=1) then counts what the merge found.
                    engine.setStatusHandler { status in notifier.status(status) }
                    try await group.run()
                    outcome = .success(())
                } catch {
                    outcome = .failure(error)
                }
                await engine.quiesce()
                signals.stop()
                engine.detachHandlers()
                try outcome.get()
            }
        }
        logger.info("stopped")
    }

    /// Finds, without creating or removing anything, the unusable paths that would otherwise only fail after the
    /// state directory has been created and locked: a refused start leaves nothing behind (§8). What only trying can
    /// tell (the lock, a live socket) is still found where it is done.
    static func preflight(_ configuration: DaemonConfiguration, socketActivated: Bool) throws {
        var directories = [
            ("state directory", configuration.stateDirectory), ("scenes directory", configuration.scenesDirectory),
        ]
        if !socketActivated {
            directories.append(("socket directory", FileSystem.parentDirectory(of: configuration.socketPath)))
        }
        for (name, path) in directories {
            // The directory itself, or the first ancestor that exists, which `makeDirectory` would create it in.
            var existing = path
            var st = stat()
            while stat(existing, &st) != 0 {
                guard errno == ENOENT, existing != "/", existing != "." else {
                    throw StartupError(description: "\(name) unusable: \(SystemError("use directory", existing))")
                }
                existing = FileSystem.parentDirectory(of: existing)
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                throw StartupError(
                    description: "\(name) unusable: \(SystemError("use directory", existing, errno: ENOTDIR))")
            }
            let needed = existing == path ? R_OK | W_OK | X_OK : W_OK | X_OK
            guard access(existing, needed) == 0 else {
                throw StartupError(description: "\(name) unusable: \(SystemError("use directory", existing))")
            }
        }
        var st = stat()
        if !socketActivated, lstat(configuration.socketPath, &st) == 0, (st.st_mode & S_IFMT) != S_IFSOCK {
            throw StartupError(description: "socket path \(configuration.socketPath) exists and is not a socket")
        }
    }

    /// The socket to serve: systemd's (`inherited`), when it passed one, else the configured path, refusing to steal
    /// the socket of a live daemon.
    static func listener(for configuration: DaemonConfiguration, inherited: Int32?) throws -> ControlServer.Listener {
        if let inherited { return .inherited(inherited) }
        let path = configuration.socketPath
        guard path.utf8.count < 108 else {
            throw StartupError(description: "socket path \(path) is longer than the 107 bytes a Unix socket allows")
        }
        do throws(SystemError) {
            try FileSystem.makeDirectory(FileSystem.parentDirectory(of: path), mode: 0o755)
        } catch {
            throw StartupError(description: "socket directory unusable: \(error)")
        }
        var st = stat()
        if lstat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFSOCK else {
                throw StartupError(description: "socket path \(path) exists and is not a socket")
            }
            if UnixSocketProbe.isListening(path) {
                throw StartupError(description: "another daemon is already listening on \(path)")
            }
            unlink(path)
        }
        return .path(path, mode: configuration.socketMode)
    }
}

/// Lets the socket's readiness callback, made before the service group exists, reach the lifecycle driver made
/// after it.
final class DriverBox: Sendable {
    private let stored = Mutex<LifecycleDriver?>(nil)

    var driver: LifecycleDriver? {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}

/// Sends `STOPPING=1` as soon as a graceful shutdown begins: the group shuts services down in reverse order, and
/// this one is listed last.
struct StoppingNotice: Service {
    let notifier: ReportedNotifier
    let logger: Logger

    func run() async throws {
        // Throws only when cancelled, which also means the daemon is stopping.
        try? await gracefulShutdown()
        logger.info("shutting down")
        notifier.stopping()
        notifier.extendTimeout(.seconds(90))
    }
}

/// Whether something accepts connections on a Unix socket path (a live daemon), as opposed to a stale file.
enum UnixSocketProbe {
    static func isListening(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}

extension StoppingNotice: CustomStringConvertible {
    var description: String { "StoppingNotice" }
}
