import Foundation
import Logging
import NIOCore
import NIOEmbedded
import SceneSyncCore
import SceneSyncTestKit

@testable import SceneSyncDaemon

/// The real ``EngineCore`` on an `EmbeddedEventLoop`, driven one input at a time on the caller's thread, over a
/// real scenes directory and state directory in a temp folder and a real inotify descriptor that is read only where
/// the engine drains it.
///
/// Nothing runs unless the harness says so: the loop's jobs and timers run at ``runLoop()``, each blocking job the
/// engine submits waits in ``waiting`` until ``runJob(at:)`` performs it, and its completion waits in ``finished``
/// until ``deliver(at:)`` queues it on the loop. So one seed is one interleaving of the engine's inputs, its blocking
/// calls and an app's writes, replayed exactly, which the daemon's threads could also produce.
final class EngineHarness {
    let loop = EmbeddedEventLoop()
    let root: String
    let scenesDirectory: String
    let stateDirectory: StateDirectory
    let watcher: InotifyWatcher
    /// The scene files the daemon read, as the kernel saw it.
    let reads: HarnessReadObserver
    let core: EngineCore
    /// Jobs the engine submitted, not run yet.
    var waiting: [BlockingJob] = []
    /// Jobs run, whose completion has not reached the loop yet.
    var finished: [@Sendable () -> Void] = []
    /// Scene-file writes made to fail as on a full disk.
    let faults = HarnessFaults()
    /// How many app writes (saves and removals) were made.
    private(set) var appWritesMade = 0
    private let handed = HarnessMailbox<BlockingJob>()

    /// How many revisions a durable reservation covers: small, so that schedules cross reservations often.
    static let revisionBlock: UInt64 = 8

    /// `inlinesSmallFileSteps`: as the daemon runs; `false` sends every file step to the blocking executor too,
    /// so that the schedule can put an app's write between a step's file work and the engine's use of it.
    init(inlinesSmallFileSteps: Bool = true) throws {
        var template = Array("/tmp/scenesync-harness.XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw POSIXError(.EIO) }
        root = String(cString: created)
        scenesDirectory = root + "/scenes"
        guard mkdir(scenesDirectory, 0o755) == 0 else { throw POSIXError(.EIO) }
        reads = try HarnessReadObserver(directory: scenesDirectory)
        stateDirectory = try StateDirectory(path: root + "/state")
        try stateDirectory.reserve(upTo: Self.revisionBlock)
        var settings = EngineSettings(scenesDirectory: scenesDirectory)
        settings.revisionBlock = Self.revisionBlock
        settings.inlinesSmallFileSteps = inlinesSmallFileSteps
        // For the hook that fails a rescan's listing (``listingFails(_:)``); the others need files no schedule makes.
        settings.testHooks = true
        // Every snapshot an answer names is still there when the answer is read.
        settings.snapshotsKeep = 1000
        let (handed, faults) = (handed, faults)
        let io = BlockingIO(handingJobsTo: { handed.post($0) }, failingSceneWrites: { faults.fault(for: $0) })
        watcher = try InotifyWatcher(directory: scenesDirectory, eventLoop: loop, readsOnlyWhenTaken: true)
        core = EngineCore(
            store: SceneStore(epoch: "harness", codec: settings.codec, historyLimit: settings.historyLimit),
            settings: settings, stateDirectory: stateDirectory,
            logger: Logger(label: "harness", factory: { _ in SwiftLogNoOpLogHandler() }),
            reservedRevision: Self.revisionBlock, limits: ConnectionLimits(), metrics: DaemonMetrics(),
            loop: EngineLoop(driving: loop), io: io)
        core.handle(.attachWatcher(watcher))
        // The start-up merge of an empty directory, then ready, as the daemon starts.
        let scan = StartupScan(
            moment: SceneFileIndex.now(),
            listing: .success(.init(files: [], removed: [], check: nil)),
            timings: .init(listing: .zero, index: .zero, check: .zero, total: .zero))
        let merged = HarnessMailbox<Void>()
        let mergePromise = loop.makePromise(of: Void.self)
        mergePromise.futureResult.whenSuccess { merged.post(()) }
        core.handle(.mergeDirectory(scan, mergePromise))
        drainEverything()
        guard !merged.takeAll().isEmpty else { throw HarnessError("the start-up merge of an empty directory hangs") }
        let ready = loop.makePromise(of: [DaemonLifecycle.Action].self)
        core.handle(.becomeReady(ready))
        runLoop()
    }

    /// Ends the engine's loop (its timers are cancelled) and the watch, and removes the temp folder.
    func close() {
        watcher.close()
        reads.close()
        try? loop.syncShutdownGracefully()
        ScratchFiles.removeTree(root)
    }

    /// Runs every job queued on the loop now, then takes the blocking jobs they submitted.
    func runLoop() {
        loop.run()
        waiting.append(contentsOf: handed.takeAll())
    }

    /// Performs the blocking call of the waiting job at `index`; its completion waits in ``finished``.
    func runJob(at index: Int) {
        finished.append(waiting.remove(at: index).run())
    }

    /// Queues the completion of the finished job at `index` on the loop, and runs the loop.
    func deliver(at index: Int) {
        finished.remove(at: index)()
        runLoop()
    }

    /// Lets `amount` of the loop's time pass: the engine's timers that fall due run.
    func passTime(_ amount: TimeAmount) {
        loop.advanceTime(by: amount)
        runLoop()
    }

    /// Hands the engine one input on its loop, then runs what it queued there.
    func send(_ input: EngineInput) {
        core.handle(input)
        runLoop()
    }

    /// Runs every blocking job and delivers every completion, oldest first, until none is left.
    func drainEverything() {
        runLoop()
        while !waiting.isEmpty || !finished.isEmpty {
            while !waiting.isEmpty { runJob(at: 0) }
            while !finished.isEmpty { deliver(at: 0) }
        }
    }

    /// A new connection, registered as the daemon's handler registers one, with our own credentials (allowed to
    /// change scenes, §6); `limits` for bounds of its own instead of the engine's. Its outbox's release hook has
    /// the client's gate go on, and NIO's first read request is made, as once the handler registered it.
    func connect(limits: ConnectionLimits? = nil) -> HarnessClient {
        var made: Outbox? = limits.map { Outbox(limits: $0, counters: core.counters) }
        if made == nil { core.handle(.newOutbox { made = $0 }) }
        let outbox = made ?? Outbox(limits: ConnectionLimits(), counters: core.counters)
        var connection: UInt64 = 0
        core.handle(
            .connectionOpened(
                outbox: outbox, credentials: PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()),
                close: {}, reply: { connection = $0 }))
        runLoop()
        let client = HarnessClient(harness: self, outbox: outbox, connection: connection)
        outbox.attach(wakeWriter: {}, releaseReader: { [weak client] in client?.serveNext() })
        client.nioRead()
        return client
    }

    /// A connection that subscribes to every scene, its answer read at once.
    func subscribe() throws -> HarnessSubscriber {
        let subscriber = HarnessSubscriber(outbox: try subscribedConnection(limits: nil).outbox)
        try subscriber.read()
        return subscriber
    }

    /// A connection with a `subscriber_queue` of ``HarnessLaggingSubscriber/queueBound`` that subscribes to every
    /// scene, its answer read at once.
    func subscribeLagging() throws -> HarnessLaggingSubscriber {
        let limits = ConnectionLimits(subscriberQueue: HarnessLaggingSubscriber.queueBound)
        let subscriber = HarnessLaggingSubscriber(outbox: try subscribedConnection(limits: limits).outbox)
        try subscriber.read(core)
        return subscriber
    }

    private func subscribedConnection(limits: ConnectionLimits?) throws -> HarnessClient {
        let connection = connect(limits: limits)
        guard case .success(let request) = Command.parse(HarnessSubscriber.request) else {
            throw HarnessError("the subscribe request does not parse")
        }
        connection.write(.request(request))
        guard connection.servedCount == 1 else { throw HarnessError("the subscribe request is not served at once") }
        return connection
    }

    /// The kernel's queue overflows: every event it holds is lost, and an overflow takes their place, as a real
    /// `IN_Q_OVERFLOW` after a burst.
    func overflow() {
        _ = watcher.takeEvents()
        watcher.injectOverflow()
        runLoop()
    }

    /// While on, a rescan cannot list the scenes directory (as on `EMFILE`), and is owed until a tick retries it.
    func listingFails(_ fails: Bool) {
        let hook = stateDirectory.path + "/" + EngineCore.failListingHook
        if fails {
            _ = FileManager.default.createFile(atPath: hook, contents: nil)
        } else {
            unlink(hook)
        }
    }

    /// The housekeeping tick, as its service sends it.
    func tick() {
        send(.tick(heartbeat: false, now: .now, done: loop.makePromise(of: Void.self)))
    }

    /// Writes a scene file the way an app saves atomically: a temp file the watcher ignores, renamed over it.
    func appWrite(_ scene: SceneID, _ bytes: [UInt8]) throws {
        let temp = scenesDirectory + "/.app.tmp"
        guard FileManager.default.createFile(atPath: temp, contents: Data(bytes)),
            rename(temp, scenesDirectory + "/" + scene.fileName) == 0
        else { throw HarnessError("cannot write \(scene.fileName): errno \(errno)") }
        appWritesMade += 1
    }

    /// Removes a scene file, as an app that closes its window for good; whether there was one (removing none makes
    /// no event, so it is no app write).
    func appRemove(_ scene: SceneID) -> Bool {
        guard unlink(scenesDirectory + "/" + scene.fileName) == 0 else { return false }
        appWritesMade += 1
        return true
    }

    /// The scene file's content; `nil` when there is none. What the daemon read before is noted first, and this
    /// read is not counted as one of the daemon's.
    func file(_ scene: SceneID) -> [UInt8]? {
        reads.collect()
        defer { reads.collect(keep: false) }
        return ScratchFiles.read(scenesDirectory + "/" + scene.fileName)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
