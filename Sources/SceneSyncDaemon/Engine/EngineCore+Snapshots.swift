import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension EngineCore {
    /// Requests a snapshot, whose outcome `done` gets. Requests that arrive while one is being written share the
    /// next one, so a burst of triggers costs at most one extra write.
    func snapshot(
        reason: Snapshot.Reason, then done: @escaping (Result<SnapshotStore.Written, SceneSyncError>) -> Void
    ) {
        guard lifecycle.permits(.writeSnapshot) else {
            return done(.failure(SceneSyncError(.unavailable, "no snapshot while \(lifecycle.state)")))
        }
        report.testCounters.snapshotTriggers += 1
        switch snapshotMachine.trigger(reason, waiter: done) {
        // In a job of its own, as the trigger's caller may be in the middle of a step.
        case .write(let reason): later { [self] in writeSnapshot(reason) }
        case .wait: break
        }
    }

    /// The test hook (`SCENESYNC_TEST_HOOKS=1`) that holds every snapshot write for as long as this file exists in
    /// the state directory, so that a test can pile triggers onto one write and see them coalesced.
    static let snapshotHoldHook = ".scenesync-test-hold-snapshot"

    /// For `SIGUSR1`: snapshot without waiting for the result (failures are logged and broadcast).
    func triggerSnapshot(reason: Snapshot.Reason) {
        snapshotAfterMerging(reason: reason) { _ in }
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
        reason: Snapshot.Reason, merged: @escaping () -> Void = {},
        then done: @escaping (Result<SnapshotStore.Written, SceneSyncError>) -> Void
    ) {
        sync { [self] clock in
            if case .failure(let error) = clock {
                logger.error("cannot merge the scene files before a snapshot", metadata: ["error": "\(error)"])
                broadcastWarning(.snapshotFailed, "no snapshot: \(error.message)", scene: nil)
                return done(.failure(error))
            }
            merged()
            snapshot(reason: reason, then: done)
        }
    }

    /// The snapshot being written, between the steps of its write.
    struct SnapshotInFlight {
        let reason: Snapshot.Reason
        let time: String
        /// A copy-on-write copy of the store when the write began.
        let frozen: SceneStore
        /// The moment by which every change was merged, and the scenes whose file may have changed since, for the
        /// scene-file index written after it.
        let settled: Int64?
        let unsettled: Set<SceneID>
        var started = ContinuousClock.now
    }

    /// Writes the snapshot ``snapshotMachine`` asks for; once it is written (``snapshotWritten(_:)``), the next one
    /// it asks for, until it has none left.
    private func writeSnapshot(_ reason: Snapshot.Reason) {
        precondition(snapshotInFlight == nil, "a snapshot write began while another was under way")
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        // A copy-on-write copy: taking it costs nothing here, and the next change copies the entry table once
        // (not the scenes' elements), so the snapshot never stops changes for longer than that.
        drainWatcher()
        snapshotInFlight = SnapshotInFlight(
            reason: reason,
            time: RFC3339.format(secondsSinceEpoch: Int64(now.tv_sec), nanoseconds: Int64(now.tv_nsec)),
            frozen: store, settled: sceneFiles.settledBefore, unsettled: sceneFiles.unsettledScenes)
        // The cluster journal holds every change in the copy before the snapshot can hide one from the next start.
        guard let replicator = attachments.replicator else { return encodeSnapshot() }
        awaitOutside({ await replicator.persistRecords() }, reporting: { _ in .journalPersisted(.snapshot) })
    }

    /// Collects, encodes and fsyncs the snapshot in flight on the blocking executor: changes keep flowing while it
    /// is written. Reported by ``EngineInput/snapshotWritten(_:)``.
    func encodeSnapshot() {
        guard var inFlight = snapshotInFlight else { preconditionFailure("a snapshot was encoded while none was") }
        inFlight.started = .now
        snapshotInFlight = inFlight
        let writer = snapshots
        let keep = settings.snapshotsKeep
        let hold = settings.testHooks ? stateDirectory.path + "/" + EngineCore.snapshotHoldHook : nil
        let (frozen, time, reason) = (inFlight.frozen, inFlight.time, inFlight.reason)
        offload { () -> Result<SnapshotStore.Written, SystemError> in
            if let hold { EngineCore.waitWhileExists(hold) }
            // The copy's scenes are read where they are kept, in the order of their IDs, as they are encoded.
            let snapshot = frozen.snapshotEncoder(time: time, reason: reason)
            do throws(SystemError) {
                return .success(try writer.write(snapshot, keep: keep))
            } catch {
                return .failure(error)
            }
        } reporting: {
            .snapshotWritten($0)
        }
    }

    /// The snapshot in flight is written, or failed: its waiters are told, then its scene-file index is written,
    /// then the next snapshot, if triggers arrived meanwhile.
    func snapshotWritten(_ result: Result<SnapshotStore.Written, SystemError>) {
        guard let inFlight = snapshotInFlight else { preconditionFailure("a snapshot was written while none was") }
        snapshotInFlight = nil
        let outcome = reportSnapshot(result, reason: inFlight.reason, started: inFlight.started)
        let (waiters, following) = snapshotMachine.written()
        for waiter in waiters { later { waiter(outcome) } }
        let next = { [self] in
            guard let following else { return publishStatus(force: true) }
            writeSnapshot(following)
        }
        guard case .success = result, let settled = inFlight.settled else { return next() }
        writeSceneFileIndex(of: inFlight.frozen, settled: settled, leavingOut: inFlight.unsettled, then: next)
    }

    /// Reports a snapshot write (the metrics, the log, the subscribers' `snapshot` or `warning` event), and returns
    /// its outcome for whoever waited for it.
    private func reportSnapshot(
        _ result: Result<SnapshotStore.Written, SystemError>, reason: Snapshot.Reason,
        started: ContinuousClock.Instant
    ) -> Result<SnapshotStore.Written, SceneSyncError> {
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
            broadcastToAll(event: .snapshot, body: body)
            return .success(written)
        case .failure(let error):
            metrics.snapshots.failed.increment()
            logger.error("snapshot failed; previous snapshots are kept", metadata: ["error": "\(error)"])
            broadcastWarning(.snapshotFailed, "snapshot failed: \(error)", scene: nil, file: error.path)
            return .failure(SceneSyncError(.unavailable, "snapshot failed: \(error)"))
        }
    }
}
