public import Logging
public import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension SceneEngine {
    /// Restores the newest readable snapshot and decides the epoch (see ``StateDirectory``). Does not touch the
    /// scenes directory yet: the caller starts the watcher first, then calls ``mergeDirectory()``, so no write
    /// between the scan and the watch can be missed.
    public static func restore(
        settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger,
        limits: ConnectionLimits = ConnectionLimits(), metrics: DaemonMetrics = DaemonMetrics()
    ) throws(SceneSyncError) -> SceneEngine {
        // Before the marker is taken: a start that fails here leaves the state directory as it was.
        let highWaterMark: UInt64?
        do throws(StateDirectoryError) {
            highWaterMark = try stateDirectory.highWaterMark()
        } catch {
            throw SceneSyncError(.unavailable, "\(error)")
        }
        let marker: StateDirectory.CleanShutdown?
        do throws(StateDirectoryError) {
            marker = try stateDirectory.takeCleanShutdownMarker()
        } catch {
            throw SceneSyncError(.unavailable, "\(error)")
        }
        let (loaded, skipped) = SnapshotStore(directory: stateDirectory.snapshotsPath).loadNewest()
        for (path, reason) in skipped {
            logger.error("skipping unreadable snapshot", metadata: ["file": "\(path)", "reason": "\(reason)"])
        }
        let highWater = highWaterMark ?? 0
        for file in stateDirectory.removeLeftoverTempFiles() {
            logger.notice("removed a temp file a crash left behind", metadata: ["file": "\(file)"])
        }
        let epoch: String
        let revision: UInt64
        // Continuity needs all of it: the clean-shutdown marker naming exactly the newest snapshot, no unreadable
        // snapshot skipped, and the high-water mark (without it, nothing proves which revisions were handed out).
        if let loaded, skipped.isEmpty, highWaterMark != nil, let marker, marker.epoch == loaded.snapshot.epoch,
            marker.revision == loaded.snapshot.revision
        {
            epoch = loaded.snapshot.epoch
            revision = loaded.snapshot.revision
            logger.info(
                "restored after a clean shutdown", metadata: ["epoch": "\(epoch)", "revision": "\(revision)"])
        } else {
            epoch = StateDirectory.newEpoch()
            // Anything up to the high-water mark may have been handed out before a crash: never reuse it.
            revision = max(loaded?.snapshot.revision ?? 0, highWater, marker?.revision ?? 0)
            if loaded != nil || highWater > 0 {
                logger.warning(
                    "previous run did not shut down cleanly (or its snapshot is unusable): starting a new epoch",
                    metadata: ["epoch": "\(epoch)", "revision": "\(revision)"])
            }
        }
        var store = SceneStore(
            epoch: epoch, revision: revision, codec: settings.codec, historyLimit: settings.historyLimit)
        store.reserveCapacity(loaded?.snapshot.scenes.count ?? 0)
        for scene in loaded?.snapshot.scenes ?? [] { store.restore(scene) }
        if let loaded {
            logger.info(
                "restored snapshot",
                metadata: ["file": "\(loaded.path)", "scenes": "\(loaded.snapshot.scenes.count)"])
        }
        let reserved = revision + settings.revisionBlock
        do throws(SystemError) {
            try stateDirectory.reserve(upTo: reserved)
        } catch {
            throw SceneSyncError(.unavailable, "cannot write to the state directory: \(error)")
        }
        return SceneEngine(
            store: store, settings: settings, stateDirectory: stateDirectory, logger: logger,
            reservedRevision: reserved, limits: limits, metrics: metrics)
    }

    /// Brings the restored state and the scenes directory together (§5): missing files are written back (or their
    /// scenes deleted), then every file is merged by content.
    ///
    /// Reading the files is most of the cost with many scenes, so it runs on every core, a chunk at a time and one
    /// chunk ahead, while the merging stays here, in directory order. Nothing else uses the engine before start-up
    /// is done, and each file is still read shortly before it is merged (a later write reaches the watcher, whose
    /// events are taken once start-up is done).
    public func mergeDirectory() async {
        // The watcher runs already, and every file is listed and read after this moment: once the merge is done,
        // every change made before it is in the store (see ``SceneFileIndex``).
        let moment = SceneFileIndex.now()
        let started = ContinuousClock.now
        let directory = settings.scenesDirectory
        let listing = await io.run { () -> Result<(names: [String], removed: [String]), SystemError> in
            do throws(SystemError) {
                let names = try FileSystem.list(directory)
                // A crash between writing a temp file and renaming it left these; the scene's state is in the
                // snapshot or its file, never only there.
                let removed = names.filter { name in
                    SceneEngine.isOwnTempName(name) && unlink(directory + "/" + name) == 0
                }
                return .success((names, removed))
            } catch {
                return .failure(error)
            }
        }
        let names: [String]
        switch listing {
        case .success(let listed):
            names = listed.names
            for name in listed.removed {
                logger.notice("removed a temp file a crash left behind", metadata: ["file": "\(name)"])
            }
        case .failure(let error):
            logger.error("cannot list scenes directory", metadata: ["error": "\(error)"])
            await restoreMissingFiles()
            await rescan(reason: nil)
            publishStatus()
            return
        }
        let files = names.compactMap(SceneID.init(fileName:))
        let present = Set(files)
        // One listing tells which snapshot scenes lack a file, instead of a stat per scene.
        await restoreMissingFiles(present: present)
        let limit = settings.codec.maxFileBytes
        let io = io
        let index = await restoredSceneFileIndex()
        var unchanged = 0
        // The next chunk is read while this one is merged, so the reading threads and the engine work at once.
        func read(from start: Int) -> (chunk: [SceneID], contents: Task<[StartupRead], Never>)? {
            guard start < files.count else { return nil }
            let chunk = Array(files[start..<min(files.count, start + SceneEngine.fileChunk)])
            return (
                chunk,
                Task {
                    await SceneEngine.readChangedFiles(chunk, directory: directory, limit: limit, index: index, on: io)
                }
            )
        }
        var start = 0
        var next = read(from: start)
        while let (chunk, reading) = next {
            let contents = await reading.value
            start += chunk.count
            next = read(from: start)
            await reserveForMerges(chunk.count)
            for (scene, content) in zip(chunk, contents) {
                switch content {
                case .content(let content):
                    mergeFile(scene, content: content)
                case .unchanged(let digest):
                    store.noteFileHoldsState(scene, digest: digest)
                    unchanged += 1
                }
            }
        }
        // Scenes whose file is gone (or was just written back by restoreMissingFiles, which reads as unchanged).
        let absent = store.sceneIDs.filter { !present.contains($0) }.sorted()
        if !absent.isEmpty {
            let contents = await readFiles(absent)
            await reserveForMerges(absent.count)
            for (scene, content) in zip(absent, contents) { mergeFile(scene, content: content) }
        }
        report.testCounters.unchangedAtStart = unchanged
        // Only after a whole merge: without the listing, the store may not hold what the files do.
        reconcileReplica()
        sceneFiles.settled(at: moment)
        logger.info(
            "merged the scenes directory",
            metadata: [
                "files": "\(files.count)", "unchanged_since_snapshot": "\(unchanged)",
                "duration": "\(ContinuousClock.now - started)",
            ])
        publishStatus()
    }

    /// Reads scene files on every thread of the blocking executor; the results are in the order of `scenes`.
    nonisolated static func readFiles(
        _ scenes: [SceneID], directory: String, limit: Int, on io: BlockingIO
    ) async -> [Result<[UInt8]?, SystemError>] {
        await io.runOnEveryThread(count: scenes.count) { index in
            readFile(directory + "/" + scenes[index].fileName, limit: limit)
        }
    }

    /// What the start-up merge learns of one scene file.
    enum StartupRead: Sendable {
        /// Its content (or its absence, or why it could not be read).
        case content(Result<[UInt8]?, SystemError>)
        /// Unchanged since the restored snapshot's index recorded it: it holds the snapshot's content, whose bytes
        /// have this digest.
        case unchanged(digest: UInt64)
    }

    /// ``readFiles(_:directory:limit:on:)``, except that a file the index says is unchanged is not read.
    nonisolated static func readChangedFiles(
        _ scenes: [SceneID], directory: String, limit: Int, index: [SceneID: SceneFileIndex.Stamp], on io: BlockingIO
    ) async -> [StartupRead] {
        // The directory is opened once for the whole batch; without it, each file's own path is looked up.
        let directoryFD = index.isEmpty ? -1 : await io.run { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let reads = await io.runOnEveryThread(count: scenes.count) { position -> StartupRead in
            let name = scenes[position].fileName
            if let stamp = index[scenes[position]],
                directoryFD >= 0
                    ? SceneFileIndex.isUnchanged(name, in: directoryFD, since: stamp)
                    : SceneFileIndex.isUnchanged(directory + "/" + name, since: stamp)
            {
                return .unchanged(digest: stamp.digest)
            }
            return .content(readFile(directory + "/" + name, limit: limit))
        }
        if directoryFD >= 0 { await io.run { _ = close(directoryFD) } }
        return reads
    }

    private nonisolated static func readFile(_ path: String, limit: Int) -> Result<[UInt8]?, SystemError> {
        do throws(SystemError) {
            return .success(try FileSystem.read(path, limit: limit))
        } catch {
            return .failure(error)
        }
    }

    /// Graceful shutdown: refuse further changes, tell every client, write the final snapshot and, only if it
    /// succeeded, the clean-shutdown marker that lets the next run keep this epoch.
    public func shutdown() async {
        // The last moment by which every change was merged, for the final snapshot's index: from here on, changes
        // are left to the next start.
        drainWatcher()
        guard lifecycle.beginDraining() else { return }
        logger.info("draining: no change is merged or broadcast any more", metadata: ["revision": "\(store.revision)"])
        // A group commit whose files are written is committed and answered; everything queued after it is refused.
        // Only then is the state final, and the shutdown event follows the answers.
        await settle()
        announceShutdown()
        switch await snapshot(reason: .shutdown) {
        case .success(let written):
            let stateDirectory = stateDirectory
            let marker = StateDirectory.CleanShutdown(epoch: store.epoch, revision: written.revision)
            let failure = await io.run { () -> SystemError? in
                do throws(SystemError) {
                    try stateDirectory.writeCleanShutdownMarker(marker)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure {
                logger.error("cannot write the clean-shutdown marker", metadata: ["error": "\(failure)"])
            }
        case .failure(let error):
            logger.error("final snapshot failed; the next start begins a new epoch", metadata: ["error": "\(error)"])
        }
        for waiter in syncBarriers.answerAll() { waiter.resume(returning: store.clock) }
        for connection in registry.connections.values { connection.outbox.close() }
        lifecycle.stop()
    }

    // MARK: - Life

    /// A signal arrived: what to do now (nothing while starting, where it is remembered for ``becomeReady()``).
    public func receive(_ signal: DaemonSignal) -> DaemonLifecycle.Action? {
        let action = lifecycle.receive(signal)
        if action == nil, lifecycle.state == .starting {
            logger.notice("\(signal) arrived while starting; it is acted on once ready")
        }
        return action
    }

    /// The socket listens on a fully merged state: serve, and perform what signals asked for meanwhile.
    public func becomeReady() -> [DaemonLifecycle.Action] {
        lifecycle.becomeReady()
    }

    /// Applies a reloaded configuration. Limits and the format policy take effect for the next change.
    public func apply(_ newSettings: EngineSettings) {
        settings = newSettings
        store.codec = newSettings.codec
        store.resizeHistory(limit: newSettings.historyLimit)
        publishStatus()
    }

    public func setReloadHandler(_ handler: @escaping @Sendable () async -> SceneSyncError?) {
        attachments.reloadHandler = handler
    }

    // MARK: - Snapshots

    /// Requests a snapshot. Requests that arrive while one is being written share the next one, so a burst of
    /// triggers costs at most one extra write.
    func snapshot(reason: Snapshot.Reason) async -> Result<SnapshotStore.Written, SceneSyncError> {
        guard lifecycle.permits(.writeSnapshot) else {
            return .failure(SceneSyncError(.unavailable, "no snapshot while \(lifecycle.state)"))
        }
        report.testCounters.snapshotTriggers += 1
        return await withCheckedContinuation { continuation in
            switch snapshotMachine.trigger(reason, waiter: continuation) {
            case .write(let reason): tasks.spawn { await self.runSnapshots(first: reason) }
            case .wait: break
            }
        }
    }

    /// The test hook (`SCENESYNC_TEST_HOOKS=1`) that holds every snapshot write for as long as this file exists in
    /// the state directory, so that a test can pile triggers onto one write and see them coalesced.
    static let snapshotHoldHook = ".scenesync-test-hold-snapshot"

    /// The test hook that makes every listing of the scenes directory by a rescan fail with EMFILE while this file
    /// exists in the state directory: running out of descriptors cannot be caused from outside without harm.
    static let failListingHook = ".scenesync-test-fail-listing"

    /// For `SIGUSR1`: snapshot without waiting for the result (failures are logged and broadcast).
    public func triggerSnapshot(reason: Snapshot.Reason) {
        tasks.spawn { _ = await self.snapshotAfterMerging(reason: reason) }
    }

    /// A snapshot that holds every scene-file change made before its trigger (§5): an app that saves its file and
    /// then signals the background phase finds that save in the snapshot. The watcher may not have read the save's
    /// events yet when the trigger arrives, so the same barrier as `sync` comes first (a file still open for
    /// writing is not waited for). The final snapshot at shutdown does not wait: changes made during a shutdown
    /// are merged at the next start (§4).
    func snapshotAfterMerging(reason: Snapshot.Reason) async -> Result<SnapshotStore.Written, SceneSyncError> {
        do throws(SceneSyncError) {
            _ = try await sync()
        } catch {
            logger.error("cannot merge the scene files before a snapshot", metadata: ["error": "\(error)"])
            broadcastWarning(.snapshotFailed, "no snapshot: \(error.message)", scene: nil)
            return .failure(error)
        }
        return await snapshot(reason: reason)
    }

    /// Writes the snapshots ``snapshotMachine`` asks for, one after the other, until it has none left.
    private func runSnapshots(first: Snapshot.Reason) async {
        var next: Snapshot.Reason? = first
        while let reason = next {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let time = RFC3339.format(secondsSinceEpoch: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec))
            // A copy-on-write copy: taking it costs nothing here, and the next change copies the entry table once
            // (not the scenes' elements), so the snapshot never stops changes for longer than that.
            drainWatcher()
            let frozen = store
            let settled = sceneFiles.settledBefore
            let unsettled = sceneFiles.unsettledScenes
            // The cluster journal holds every change in `frozen` before the snapshot can hide one from the next start.
            await attachments.replicator?.persistRecords()
            let writer = snapshots
            let keep = settings.snapshotsKeep
            let started = ContinuousClock.now
            let hold = settings.testHooks ? stateDirectory.path + "/" + SceneEngine.snapshotHoldHook : nil
            // Collecting, encoding and fsyncing run on the blocking executor: changes keep flowing while the
            // snapshot is written.
            let result = await io.run { () -> Result<SnapshotStore.Written, SystemError> in
                if let hold { SceneEngine.waitWhileExists(hold) }
                let snapshot = Snapshot(
                    epoch: frozen.epoch, revision: frozen.revision, time: time, reason: reason,
                    scenes: frozen.scenes)
                do throws(SystemError) {
                    return .success(try writer.write(snapshot, keep: keep))
                } catch {
                    return .failure(error)
                }
            }
            let outcome: Result<SnapshotStore.Written, SceneSyncError>
            switch result {
            case .success(let written):
                metrics.snapshotsWritten.increment()
                metrics.snapshotDuration.recordInterval(since: started)
                report.noteSnapshot(written)
                logger.info(
                    "wrote snapshot",
                    metadata: [
                        "file": "\(written.path)", "reason": "\(reason.rawValue)", "scenes": "\(written.scenes)",
                        "bytes": "\(written.bytes)",
                    ])
                var body: [UInt8] = Array(#""path":"#.utf8)
                JSONWriter.appendString(written.path, to: &body)
                body.append(contentsOf: #","revision":"#.utf8)
                JSONWriter.appendUInt(written.revision, to: &body)
                body.append(contentsOf: #","reason":""#.utf8)
                body.append(contentsOf: reason.rawValue.utf8)
                body.append(UInt8(ascii: "\""))
                broadcastToAll(event: "snapshot", body: body)
                outcome = .success(written)
            case .failure(let error):
                metrics.snapshotFailures.increment()
                logger.error("snapshot failed; previous snapshots are kept", metadata: ["error": "\(error)"])
                broadcastWarning(.snapshotFailed, "snapshot failed: \(error)", scene: nil, file: error.path)
                outcome = .failure(SceneSyncError(.unavailable, "snapshot failed: \(error)"))
            }
            let (waiters, following) = snapshotMachine.written()
            for waiter in waiters { waiter.resume(returning: outcome) }
            if case .success = result, let settled {
                await writeSceneFileIndex(of: frozen, settled: settled, leavingOut: unsettled)
            }
            next = following
        }
        publishStatus(force: true)
    }
}

extension SceneEngine {
    /// Runs the engine's tasks (``EngineTasks``) until ``finishTasks()``: the daemon runs it from before the start-up
    /// merge until after its services stopped.
    public nonisolated func runTasks() async {
        await tasks.run()
    }

    /// Ends ``runTasks()`` once the tasks it started have ended; those that only wait for a deadline end at once.
    public nonisolated func finishTasks() {
        tasks.finish()
    }

    /// Lets go of what the daemon attached (the reload and status handlers, the replicator): each holds the engine,
    /// so keeping them would keep a stopped engine alive, with its state-directory lock and its threads.
    public func detachHandlers() {
        attachments.detach()
    }
}
