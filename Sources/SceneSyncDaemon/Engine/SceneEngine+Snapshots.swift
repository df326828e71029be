import Logging
public import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension SceneEngine {
    /// Requests a snapshot. Requests that arrive while one is being written share the next one, so a burst of
    /// triggers costs at most one extra write.
    func snapshot(reason: Snapshot.Reason) async -> Result<SnapshotStore.Written, SceneSyncError> {
        guard lifecycle.permits(.writeSnapshot) else {
            return .failure(SceneSyncError(.unavailable, "no snapshot while \(lifecycle.state)"))
        }
        report.testCounters.snapshotTriggers += 1
        let written = loop.eventLoop.makePromise(of: Result<SnapshotStore.Written, SceneSyncError>.self)
        switch snapshotMachine.trigger(reason, waiter: written) {
        case .write(let reason): tasks.spawn { await self.runSnapshots(first: reason) }
        case .wait: break
        }
        return await written.futureResult.outcome()
    }

    /// The test hook (`SCENESYNC_TEST_HOOKS=1`) that holds every snapshot write for as long as this file exists in
    /// the state directory, so that a test can pile triggers onto one write and see them coalesced.
    static let snapshotHoldHook = ".scenesync-test-hold-snapshot"

    /// For `SIGUSR1`: snapshot without waiting for the result (failures are logged and broadcast).
    public func triggerSnapshot(reason: Snapshot.Reason) {
        tasks.spawn { _ = await self.snapshotAfterMerging(reason: reason) }
    }

    /// A snapshot that holds every scene-file change made before its trigger (§5): an app that saves its file and
    /// then signals the background phase finds that save in the snapshot. The watcher may not have read the save's
    /// events yet when the trigger arrives, so the same barrier as `sync` comes first (a file still open for
    /// writing is not waited for). The final snapshot at shutdown does not wait: changes made during a shutdown
    /// are merged at the next start (§4).
    ///
    /// - Parameter merged: runs once the merge is done and before the snapshot is triggered, for what the trigger
    ///   itself must add to the state it holds (a background phase of a scene the merge created).
    func snapshotAfterMerging(
        reason: Snapshot.Reason, merged: () -> Void = {}
    ) async -> Result<SnapshotStore.Written, SceneSyncError> {
        do throws(SceneSyncError) {
            _ = try await sync()
        } catch {
            logger.error("cannot merge the scene files before a snapshot", metadata: ["error": "\(error)"])
            broadcastWarning(.snapshotFailed, "no snapshot: \(error.message)", scene: nil)
            return .failure(error)
        }
        merged()
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
                // The copy's scenes are read where they are kept, in the order of their IDs, as they are encoded.
                let snapshot = frozen.snapshotEncoder(time: time, reason: reason)
                do throws(SystemError) {
                    return .success(try writer.write(snapshot, keep: keep))
                } catch {
                    return .failure(error)
                }
            }
            let outcome: Result<SnapshotStore.Written, SceneSyncError>
            switch result {
            case .success(let written):
                metrics.snapshots.written.increment()
                metrics.snapshots.duration.recordInterval(since: started)
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
                metrics.snapshots.failed.increment()
                logger.error("snapshot failed; previous snapshots are kept", metadata: ["error": "\(error)"])
                broadcastWarning(.snapshotFailed, "snapshot failed: \(error)", scene: nil, file: error.path)
                outcome = .failure(SceneSyncError(.unavailable, "snapshot failed: \(error)"))
            }
            let (waiters, following) = snapshotMachine.written()
            for waiter in waiters { waiter.succeed(outcome) }
            if case .success = result, let settled {
                await writeSceneFileIndex(of: frozen, settled: settled, leavingOut: unsettled)
            }
            next = following
        }
        publishStatus(force: true)
    }
}
