import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension EngineCore {
    /// Restores the newest readable snapshot and decides the epoch (see ``StateDirectory``), while the scenes
    /// directory is listed and each file checked against the scene-file index (``StartupScan``): neither needs the
    /// other, and the check is most of the merge's cost with many scenes. `watch` starts watching the scenes
    /// directory on `loop` (the engine's), before the listing, so no write after the listing can be missed; its
    /// events wait for the engine. It is called once the snapshot is being read: the kernel walks every file of a
    /// directory when a watch is added (14 ms with 100,000 scene files here), which nothing else has to wait for.
    /// The caller then merges with ``Engine/mergeDirectory(_:)``, given the scan returned here.
    static func restore(
        settings: EngineSettings, stateDirectory: StateDirectory, logger: Logger, loop: EngineLoop,
        watch: () throws(SceneSyncError) -> InotifyWatcher, limits: ConnectionLimits = ConnectionLimits(),
        metrics: DaemonMetrics = DaemonMetrics()
    ) async throws(SceneSyncError) -> (engine: Engine, scan: StartupScan, watcher: InotifyWatcher) {
        // Before the marker is taken: a start that fails here leaves the state directory as it was.
        let highWaterMark: UInt64?
        do throws(StateDirectoryError) {
            highWaterMark = try stateDirectory.highWaterMark()
        } catch {
            throw SceneSyncError(.unavailable, "\(error)")
        }
        let io = BlockingIO()
        let started = ContinuousClock.now
        let snapshots = SnapshotStore(directory: stateDirectory.snapshotsPath)
        // Off the caller's thread, which the scan's tasks may need: the decode takes every core it finds. Reading
        // changes nothing in the state directory.
        async let loading = io.run { snapshots.loadNewest() }
        let watcher = try watch()
        assert(watcher.directory == settings.scenesDirectory, "the scan lists the watched directory")
        let marker: StateDirectory.CleanShutdown?
        do throws(StateDirectoryError) {
            marker = try stateDirectory.takeCleanShutdownMarker()
        } catch {
            throw SceneSyncError(.unavailable, "\(error)")
        }
        // Only an index of the snapshot the marker names can be of the restored state (see ``StartupScan``).
        async let scanning = StartupScan.run(
            directory: settings.scenesDirectory, indexPath: stateDirectory.sceneFileIndexPath, expected: marker,
            codec: SceneFileIndex.describe(settings.codec), on: io)
        let (loaded, skipped) = await loading
        let decoded = ContinuousClock.now
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
            // The phases of a restart, with their times: reading and decoding the snapshot, then filling the store.
            logger.info(
                "restored snapshot",
                metadata: [
                    "file": "\(loaded.path)", "scenes": "\(loaded.snapshot.scenes.count)",
                    "read_and_decode": "\(decoded - started)", "store": "\(ContinuousClock.now - decoded)",
                ])
        }
        let reserved = revision + settings.revisionBlock
        do throws(SystemError) {
            try stateDirectory.reserve(upTo: reserved)
        } catch {
            throw SceneSyncError(.unavailable, "cannot write to the state directory: \(error)")
        }
        let restored = ContinuousClock.now
        let scan = await scanning
        logScan(scan, waited: ContinuousClock.now - restored, logger: logger)
        if settings.testHooks {
            let hold = stateDirectory.path + "/" + EngineCore.restoreHoldHook
            await io.run { EngineCore.waitWhileExists(hold) }
        }
        // Made on the engine's loop, where it lives from now on; everything else holds the handle.
        let restoredStore = store
        let engine = await loop.eventLoop.submit {
            Engine(
                core: EngineCore(
                    store: restoredStore, settings: settings, stateDirectory: stateDirectory, logger: logger,
                    reservedRevision: reserved, limits: limits, metrics: metrics, loop: loop, io: io))
        }.outcome()
        return (engine, scan, watcher)
    }

    /// The test hook (`SCENESYNC_TEST_HOOKS=1`) that holds a restore, once the scan is logged, for as long as this
    /// file exists in the state directory: a test then changes a scene file after its check and before the merge,
    /// which is otherwise a moment of a fraction of a second.
    static let restoreHoldHook = ".scenesync-test-hold-restore"

    /// The scan's phases, with their times: `waited` is how long the restore waited for it once its own work was
    /// done, zero when the scan ran entirely beside the snapshot's decode.
    private static func logScan(_ scan: StartupScan, waited: Duration, logger: Logger) {
        var metadata: Logger.Metadata = [
            "listing": "\(scan.timings.listing)", "index": "\(scan.timings.index)",
            "listed_files_check": "\(scan.timings.check)", "duration": "\(scan.timings.total)",
            "waited_after_restore": "\(waited)",
        ]
        if case .success(let listing) = scan.listing {
            metadata["files"] = "\(listing.files.count)"
            metadata["unchanged_since_index"] = "\(listing.check?.unchanged.count(where: { $0 != nil }) ?? 0)"
        }
        logger.info("listed and checked the scenes directory while the snapshot was decoded", metadata: metadata)
    }
}
