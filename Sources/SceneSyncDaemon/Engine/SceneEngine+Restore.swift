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
        let started = ContinuousClock.now
        let (loaded, skipped) = SnapshotStore(directory: stateDirectory.snapshotsPath).loadNewest()
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
        return SceneEngine(
            store: store, settings: settings, stateDirectory: stateDirectory, logger: logger,
            reservedRevision: reserved, limits: limits, metrics: metrics, loop: EngineLoop(), io: BlockingIO())
    }
}
