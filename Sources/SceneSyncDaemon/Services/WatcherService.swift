public import Logging
public import ServiceLifecycle

/// Feeds the watcher's batches to the engine in kernel order, and re-creates the watch when the scenes directory
/// itself was removed.
public struct WatcherService: Service {
    let engine: Engine
    let directory: String
    let logger: Logger
    private let initial: InotifyWatcher

    /// The watcher is created before the directory is scanned, so that no write between scan and watch is lost.
    public init(engine: Engine, directory: String, watcher: InotifyWatcher, logger: Logger) {
        self.engine = engine
        self.directory = directory
        self.initial = watcher
        self.logger = logger
    }

    public func run() async throws {
        var watcher = initial
        while true {
            let current = watcher
            engine.attach(current)
            await withGracefulShutdownHandler {
                // The engine takes the events itself, so that it can also take them before deciding a client's
                // change; a wake-up only says there are some.
                for await _ in current.wakeups {
                    engine.drainWatcher()
                }
                engine.drainWatcher()
                // The engine recreates a vanished directory when it handles that event: before a new watch.
                await engine.settle()
            } onGracefulShutdown: {
                current.close()
            }
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            // The stream ended without a shutdown: the directory went away. The engine recreated it.
            do {
                watcher = try InotifyWatcher(directory: directory, eventLoop: engine.loop.eventLoop)
                engine.take([.overflow])
            } catch {
                logger.critical("cannot watch the scenes directory again", metadata: ["error": "\(error)"])
                throw error
            }
        }
    }
}

extension WatcherService: CustomStringConvertible {
    public var description: String { "WatcherService(\(directory))" }
}
