public import Logging
public import ServiceLifecycle

/// Feeds the watcher's batches to the engine in kernel order, and re-creates the watch when the scenes directory
/// itself was removed.
public struct WatcherService: Service {
    let engine: SceneEngine
    let directory: String
    let logger: Logger
    private let initial: InotifyWatcher

    /// The watcher is created before the directory is scanned, so that no write between scan and watch is lost.
    public init(engine: SceneEngine, directory: String, watcher: InotifyWatcher, logger: Logger) {
        self.engine = engine
        self.directory = directory
        self.initial = watcher
        self.logger = logger
    }

    public func run() async throws {
        var watcher = initial
        while true {
            let current = watcher
            await engine.attach(current)
            await withGracefulShutdownHandler {
                // The engine takes the events itself, so that it can also take them before deciding a client's
                // change; a wake-up only says there are some.
                for await _ in current.wakeups {
                    await engine.drainWatcher()
                }
                await engine.drainWatcher()
                // The engine recreates a vanished directory when it handles that event: before a new watch.
                await engine.settle()
            } onGracefulShutdown: {
                current.close()
            }
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            // The stream ended without a shutdown: the directory went away. The engine recreated it.
            do {
                watcher = try InotifyWatcher(directory: directory, eventLoop: engine.loop.eventLoop)
                await engine.handle([.overflow])
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
