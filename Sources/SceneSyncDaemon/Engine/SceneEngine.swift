import Logging
public import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The single owner of the scene state.
///
/// Every change — a scene file the watcher reports, a client request, a restore — is applied here, one at a time,
/// so revisions are handed out in one total order and every subscriber sees the same sequence. Fan-out only appends
/// to per-connection ``Outbox``es and never waits; slow I/O that does not decide a change (snapshots) runs off the
/// actor.
public actor SceneEngine {
    var store: SceneStore
    var settings: EngineSettings
    let logger: Logger
    let stateDirectory: StateDirectory
    let snapshots: SnapshotStore
    let counters: DeliveryCounters
    /// Counters, gauges and histograms for the `metrics` op.
    let metrics: DaemonMetrics
    /// Bounds of every connection, shared with the server and changed in place by a reload.
    let limits: ConnectionLimits
    /// Pending catch-ups (the `state` events of a subscribe or resync), oldest first per subscription: each walks
    /// the store as it was when the catch-up was queued, and is written a chunk at a time (see
    /// ``nextCatchUpChunk(subscription:)``).
    var catchUps: [UInt64: [CatchUp]] = [:]
    let startedAt = ContinuousClock.now
    /// Our own uid: the daemon's user may always write.
    let ownUID: UInt32

    /// Revisions up to this one are durably reserved in the state directory.
    var reservedRevision: UInt64

    var connections: [UInt64: ConnectionContext] = [:]
    var subscriptions: [UInt64: Subscription] = [:]
    var nextSubscriptionID: UInt64 = 1
    var nextConnectionID: UInt64 = 1

    /// The watcher whose events this engine takes (see ``drainWatcher()``); replaced when the directory is recreated.
    var watcher: InotifyWatcher? = nil
    /// Scene files written in place and not closed yet: not a change until closed (§3).
    var openWriters: Set<SceneID> = []
    /// Client changes waiting for such a writer to close its file, by scene.
    var writerWaiters: [SceneID: [WriterWaiter]] = [:]
    var nextWriterWaiter: UInt64 = 1

    /// Where scene files are read and written, off the engine's executor.
    let fileIO = FileIOQueue()
    /// File events taken but not merged yet, in kernel order (see ``startPipeline()``).
    var heldEvents: [SceneDirectoryEvent] = []
    /// Client changes waiting for the next group commit, in the order they arrived.
    var pendingGroups: [ChangeGroup] = []
    /// Other hosts' changes waiting for the pipeline (§9), applied one step each.
    var pendingRemotes: [PendingRemote] = []
    /// A step of the pipeline (file events or a group commit) is in flight.
    var pipelineRunning = false
    var pipelineWaiters: [CheckedContinuation<Void, Never>] = []

    var pendingSyncs: [String: [CheckedContinuation<Clock, Never>]] = [:]
    var nextSyncCookie: UInt64 = 1

    /// Scene files whose change could not be merged because no revision could be reserved (a full or failing state
    /// directory): merged again, from their content then, at every housekeeping tick until it works.
    var deferredMerges: Set<SceneID> = []
    /// The digest of each scene's rejected file content: the same bad content merged again (a second event for one
    /// write, a rescan) is not warned about twice, and when the daemon's rename displaces it, it is known, not an
    /// app's new write (see ``isKnownFileContent(_:of:)``). Cleared when a good file or the file's removal is merged.
    var rejectedFiles: [SceneID: UInt64] = [:]

    var fileErrors = 0
    var snapshotsWritten = 0
    var lastSnapshot: SnapshotStore.Written? = nil
    var snapshotWaiters: [CheckedContinuation<Result<SnapshotStore.Written, SceneSyncError>, Never>] = []
    var snapshotReason: Snapshot.Reason? = nil
    var snapshotRunning = false

    /// Starting, ready, draining or stopped: what may happen now is asked of it, never decided here.
    var lifecycle = DaemonLifecycle()
    var reloadHandler: (@Sendable () async -> SceneSyncError?)? = nil

    /// Called after every accepted change and snapshot, to keep the systemd status line current.
    var onStatusChange: (@Sendable (String) -> Void)? = nil
    /// When the status line last went out, and whether a trailing update is already scheduled (see
    /// ``publishStatus()``).
    var statusSentAt: ContinuousClock.Instant? = nil
    var statusFlushScheduled = false
    var lastStatusLine = ""

    /// Replication across hosts (§9), when `cluster.postgres` is set; see SceneEngine+Replication.swift.
    var replicator: (any ChangeReplicator)? = nil
    /// Whether the cluster database is unreachable now, so new subscriptions are told.
    var clusterOutage = false

    struct Subscription {
        var id: UInt64
        var connection: UInt64
        var patterns: [ScenePattern]
        let outbox: Outbox

        func matches(_ scene: SceneID) -> Bool { patterns.contains { $0.matches(scene) } }
    }

    /// One client connection, as the engine sees it.
    public struct ConnectionContext: Sendable {
        let id: UInt64
        let outbox: Outbox
        let credentials: PeerCredentials?
        /// Closes the connection (stall timeout, shutdown).
        let close: @Sendable () -> Void
        var clientName: String? = nil
    }

    init(
        store: SceneStore, settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger,
        reservedRevision: UInt64, limits: ConnectionLimits, metrics: DaemonMetrics
    ) {
        self.limits = limits
        self.metrics = metrics
        self.counters = DeliveryCounters(metrics: metrics)
        self.store = store
        self.settings = settings
        self.stateDirectory = stateDirectory
        self.snapshots = SnapshotStore(directory: stateDirectory.snapshotsPath)
        self.logger = logger
        self.ownUID = getuid()
        self.reservedRevision = reservedRevision
    }

    public var clock: Clock { store.clock }

    func setStatusHandler(_ handler: @escaping @Sendable (String) -> Void) {
        onStatusChange = handler
        lastStatusLine = statusLine
        statusSentAt = .now
        handler(lastStatusLine)
    }

    /// The one-line summary for systemd's `STATUS=`.
    var statusLine: String {
        var line = "\(store.count) scenes, revision \(store.revision), \(subscriptions.count) subscribers"
        if let lastSnapshot { line += ", last snapshot r\(lastSnapshot.revision) (\(lastSnapshot.reason.rawValue))" }
        return line
    }

    // MARK: - Revisions

    /// Makes sure the next revision is durably reserved before it is handed out. One write per block.
    func reserveNextRevision() throws(SceneSyncError) {
        try reserveRevisions(1)
    }

    /// Makes sure the next `count` revisions are durably reserved before they are handed out.
    func reserveRevisions(_ count: Int) throws(SceneSyncError) {
        guard store.revision + UInt64(count) > reservedRevision else { return }
        let mark = store.revision + max(UInt64(count), StateDirectory.revisionBlock)
        do throws(SystemError) {
            try stateDirectory.reserve(upTo: mark)
        } catch {
            logger.error("cannot reserve revisions", metadata: ["error": "\(error)"])
            throw SceneSyncError(.unavailable, "cannot record the revision high-water mark: \(error)")
        }
        reservedRevision = mark
    }

    // MARK: - Scene files

    func filePath(_ scene: SceneID) -> String { settings.scenesDirectory + "/" + scene.fileName }

    /// Reads a scene file as it is now and merges it. Reading at handling time is what makes rapid rewrites
    /// coalesce and the daemon's own write-backs silent.
    /// `content` is the file as just read elsewhere (start-up reads files in parallel); by default it is read here.
    /// `evenWhileDraining` is for content no longer in the file (see ``mergeDisplaced(_:_:)``).
    @discardableResult
    func mergeFile(
        _ scene: SceneID, content: Result<[UInt8]?, SystemError>? = nil, evenWhileDraining: Bool = false
    ) -> ChangeRecord? {
        guard evenWhileDraining || lifecycle.permits(.mergeFileChanges) else { return nil }
        let bytes: [UInt8]?
        do throws(SystemError) {
            if let content {
                bytes = try content.get()
            } else {
                bytes = try FileSystem.read(filePath(scene), limit: settings.codec.maxFileBytes)
            }
        } catch let error where error.errno == EISDIR {
            // A directory named like a scene file is not one (§3): for the scene there is no file, as the watcher
            // sees it too (it ignores directories). Scans list names without their types, so they meet it here.
            bytes = nil
        } catch {
            fileErrors += 1
            metrics.fileErrors.increment()
            logger.warning("cannot read scene file", metadata: ["file": "\(filePath(scene))", "error": "\(error)"])
            broadcastWarning(.invalidFile, "cannot read \(scene.fileName): \(error)", scene: scene)
            return nil
        }
        if bytes != nil || store.scene(scene) != nil {
            do throws(SceneSyncError) {
                try reserveNextRevision()
            } catch {
                // Not lost: kept for a retry, and said once per scene so subscribers know the state lags the file.
                if deferredMerges.insert(scene).inserted {
                    broadcastWarning(
                        .writeFailed,
                        "\(scene.fileName) changed but cannot be merged yet: \(error.message); it is merged once the "
                            + "state directory is writable again", scene: scene)
                }
                return nil
            }
        }
        deferredMerges.remove(scene)
        switch store.applyFile(scene, bytes: bytes) {
        case .changed(let record):
            rejectedFiles[scene] = nil
            metrics.fileChanges.increment()
            broadcast(record)
            return record
        case .unchanged:
            rejectedFiles[scene] = nil
            return nil
        case .rejected(let error):
            // Only a rejected file has bytes; warned about once until they change.
            let digest = SceneStore.digest(bytes ?? [])
            guard rejectedFiles.updateValue(digest, forKey: scene) != digest else { return nil }
            fileErrors += 1
            metrics.fileErrors.increment()
            logger.warning(
                "rejected scene file", metadata: ["file": "\(filePath(scene))", "reason": "\(error)"])
            broadcastWarning(error.warningCode, "\(scene.fileName): \(error)", scene: scene)
            return nil
        }
    }

    /// Rescans the whole directory, judging every file by content: nothing missed, nothing unchanged revised.
    ///
    /// Unlike the start-up merge, it reads each file in the same actor turn that merges it. Reading ahead in
    /// parallel would suspend the engine: a client change could then write a file whose older, preloaded content
    /// would be merged afterwards as if the app had reverted it.
    func rescan(reason: String?) {
        let names: [String]
        do throws(SystemError) {
            names = try FileSystem.list(settings.scenesDirectory)
        } catch {
            logger.error("cannot list scenes directory", metadata: ["error": "\(error)"])
            return
        }
        var seen = Set<SceneID>()
        for name in names {
            guard let scene = SceneID(fileName: name) else { continue }
            seen.insert(scene)
            // A file still open for writing is merged when its writer closes it, never half-written (§3).
            if openWriters.contains(scene) { continue }
            mergeFile(scene)
        }
        for scene in Array(store.sceneIDs) where !seen.contains(scene) {
            mergeFile(scene)
        }
        if let reason {
            logger.notice("rescanned scenes directory", metadata: ["reason": "\(reason)"])
            broadcastWarning(.rescanned, "rescanned the scenes directory after \(reason)", scene: nil)
            // A waiting sync's cookie event may be among the lost ones (or, after the directory was recreated, the
            // cookie was made before the new watch existed): it would wait forever. This rescan has merged every
            // change made before any of them was asked for, which is all a sync promises.
            resumePendingSyncs()
        }
    }

    /// Answers every waiting `sync` and removes their cookies.
    func resumePendingSyncs() {
        for (cookie, waiters) in pendingSyncs {
            try? FileSystem.remove(settings.scenesDirectory + "/" + SceneEngine.syncCookiePrefix + cookie)
            for waiter in waiters { waiter.resume(returning: store.clock) }
        }
        pendingSyncs = [:]
    }

    /// Takes one batch from the watcher, in kernel order: which files are open for writing is known at once, and
    /// the changes are merged by the pipeline (see ``startPipeline()``), after the step in flight.
    public func handle(_ events: [SceneDirectoryEvent]) {
        let start = ContinuousClock.now
        defer { metrics.timeTurn(since: start) }
        // Once draining, the final snapshot holds the last revision anyone was told of: a change now is merged at
        // the next start, above it (§4).
        guard lifecycle.permits(.mergeFileChanges) else { return }
        for event in events {
            switch event {
            case .changed(let scene), .removed(let scene):
                // A waiting change queues behind this event, so the writer's content is merged first.
                openWriters.remove(scene)
                resumeWriterWaiters(for: scene)
            case .modified(let scene):
                openWriters.insert(scene)
            case .overflow:
                // Lost events may include the close of a writer: which files are still open is unknown now. The
                // rescan reads them all; one still being written is merged again when its writer closes it.
                openWriters.removeAll()
                resumeAllWriterWaiters()
            case .marker, .directoryGone:
                break
            }
        }
        heldEvents.append(contentsOf: events)
        startPipeline()
    }

    func handleMarker(_ name: String) {
        if name.hasPrefix(SceneEngine.syncCookiePrefix) {
            let cookie = String(name.dropFirst(SceneEngine.syncCookiePrefix.count))
            try? FileSystem.remove(settings.scenesDirectory + "/" + name)
            for waiter in pendingSyncs.removeValue(forKey: cookie) ?? [] { waiter.resume(returning: store.clock) }
        } else if settings.testHooks, name == ".scenesync-test-overflow" {
            try? FileSystem.remove(settings.scenesDirectory + "/" + name)
            rescan(reason: "an inotify queue overflow")
        }
    }

    /// The scenes directory itself vanished. Recreate it and put every scene file back (or forget the scenes when
    /// `restore_missing` is off), so apps keep finding their state. The caller restarts the watcher.
    func directoryGone() {
        openWriters.removeAll()
        resumeAllWriterWaiters()
        logger.error(
            "scenes directory disappeared; recreating it", metadata: ["directory": "\(settings.scenesDirectory)"])
        do throws(SystemError) {
            try FileSystem.makeDirectory(settings.scenesDirectory, mode: 0o755)
        } catch {
            logger.error("cannot recreate scenes directory", metadata: ["error": "\(error)"])
        }
        broadcastWarning(.rescanned, "the scenes directory was removed and has been recreated", scene: nil)
        restoreMissingFiles()
        // Sync barriers waiting on a cookie in the old directory would never complete.
        resumePendingSyncs()
    }

    /// Writes back the file of every scene whose file is missing, or deletes those scenes when `restore_missing`
    /// is off (§5). `present` is the scene files a directory listing just found; without one, each file is checked.
    func restoreMissingFiles(present: Set<SceneID>? = nil) {
        // Only the missing scenes are copied out of the store (in ID order), not all of them.
        let missing = store.sceneIDs.filter { id in
            if let present { return !present.contains(id) }
            var exists = stat()
            return stat(filePath(id), &exists) != 0 && errno == ENOENT
        }
        for id in missing.sorted() {
            guard let scene = store.scene(id) else { continue }
            let path = filePath(scene.id)
            if settings.restoreMissing {
                let bytes = scene.fileBytes
                do throws(SystemError) {
                    if try FileSystem.createExclusively(bytes, at: path, tempName: SceneEngine.tempName(scene.id)) {
                        store.noteFileWritten(scene.id, bytes: bytes)
                    } else {
                        // An app created the file since it was found missing: that is a change, never overwritten.
                        mergeFile(scene.id)
                    }
                } catch {
                    logger.warning("cannot restore scene file", metadata: ["file": "\(path)", "error": "\(error)"])
                    broadcastWarning(.writeFailed, "cannot restore \(scene.id.fileName): \(error)", scene: scene.id)
                }
            } else {
                mergeFile(scene.id)
            }
        }
    }

    /// A temp name in the scenes directory that the watcher ignores (a dot-file, not ending in `.json`):
    /// `.<ID>.json.<pid>.tmp`. The pattern is reserved for the daemon (README): such files are removed at start.
    static func tempName(_ scene: SceneID) -> String { ".\(scene.rawValue).json.\(getpid()).tmp" }

    /// Whether `name` has the shape of ``tempName(_:)``: a dot, a scene ID, `.json.`, a pid, `.tmp`.
    static func isOwnTempName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return false }
        let inner = name.dropFirst().dropLast(".tmp".count)
        guard let marker = inner.range(of: ".json.", options: .backwards) else { return false }
        let pid = inner[marker.upperBound...]
        guard !pid.isEmpty, pid.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return SceneID(fileName: String(inner[..<marker.lowerBound]) + ".json") != nil
    }

    static let syncCookiePrefix = ".scenesync-sync-"

    // MARK: - Status

    /// The status line changes with every accepted change, but each update is a datagram to systemd (a socket, a
    /// `sendto` and a `close` on the owner loop, and a wake-up of PID 1). Updates are therefore sent at most once
    /// per ``statusInterval``: the first at once, the ones that follow within the interval as one trailing update
    /// when it ends, so the line is never more than that interval behind. `force` sends at once (after a snapshot,
    /// which operators look for right away).
    func publishStatus(force: Bool = false) {
        if force, onStatusChange != nil {
            sendStatus(.now)
            return
        }
        guard onStatusChange != nil, !statusFlushScheduled else { return }
        let now = ContinuousClock.now
        guard let sentAt = statusSentAt, now - sentAt < Self.statusInterval else {
            sendStatus(now)
            return
        }
        statusFlushScheduled = true
        Task {
            try? await Task.sleep(until: sentAt + Self.statusInterval, clock: .continuous)
            self.flushStatus()
        }
    }

    private func flushStatus() {
        statusFlushScheduled = false
        sendStatus(.now)
    }

    private func sendStatus(_ now: ContinuousClock.Instant) {
        statusSentAt = now
        let line = statusLine
        guard line != lastStatusLine else { return }
        lastStatusLine = line
        onStatusChange?(line)
    }

    static let statusInterval = Duration.milliseconds(100)
}
