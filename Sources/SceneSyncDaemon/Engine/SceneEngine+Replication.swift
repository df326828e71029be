import SceneSyncCore

extension SceneEngine {
    /// Connects the replicator; before the start-up merge, so that changes found then are pushed too.
    public func attach(replicator: any ChangeReplicator) {
        self.replicator = replicator
    }

    /// Hands an accepted local change of a shared scene to the replicator; a remote change is never pushed back.
    func replicate(_ record: ChangeRecord) {
        guard let replicator, record.origin.source != .remote, replicator.shares(record.scene) else { return }
        let bytes = record.kind == .delete ? nil : store.scene(record.scene)?.fileBytes
        replicator.record(LocalChange(record: record, fileBytes: bytes))
    }

    /// A remote change waiting for its turn in the pipeline.
    struct PendingRemote {
        let change: RemoteChange
        let done: CheckedContinuation<RemoteOutcome, Never>
    }

    /// Applies another host's change as a change of origin `remote` (§9). It is a step of the engine's pipeline,
    /// like a group commit: nothing else changes the store while its file is written off the engine, an app's
    /// write reported before it is merged first, and the daemon's own rename of it is skipped by the watcher, so
    /// the write is silent.
    public func applyRemote(_ change: RemoteChange) async -> RemoteOutcome {
        guard lifecycle.permits(.acceptClientChanges) else { return .stopping }
        let id = change.scene
        if replicator?.hasPending(id) == true { return .superseded }
        // An app holds the file open: its content, once closed, is a local change pushed after this one, and wins.
        if openWriters.contains(id), !(await waitForWriter(id)) { return .superseded }
        return await withCheckedContinuation { continuation in
            pendingRemotes.append(PendingRemote(change: change, done: continuation))
            startPipeline()
        }
    }

    /// The pipeline step of one remote change (see ``applyRemote(_:)``).
    func performRemote(_ change: RemoteChange) async -> RemoteOutcome {
        guard lifecycle.permits(.acceptClientChanges) else { return .stopping }
        let id = change.scene
        if openWriters.contains(id) { return .superseded }
        // The watcher reports every finished write, and file events run before this step; only a file whose
        // content the store does not know is read here first (as for a group commit).
        if deferredMerges.contains(id) || (store.scene(id) != nil && store.fileDigest(id) == nil) {
            let content = await readFiles([id])
            guard lifecycle.permits(.acceptClientChanges) else { return .stopping }
            if let first = content.first, case .success(let bytes) = first,
                bytes.map(SceneStore.digest) != store.fileDigest(id), bytes != nil || store.scene(id) != nil
            {
                mergeFile(id, content: first)
            }
        }
        // An unread write of an app just merged is a local change now, pushed after this one: it wins.
        if replicator?.hasPending(id) == true { return .superseded }
        let plan: SceneStore.Plan
        do throws(SceneFileError) {
            plan = try store.planReplica(
                id, bytes: change.fileBytes, format: change.format, origin: change.origin, conflict: change.conflict)
        } catch {
            logger.warning("refused a remote change", metadata: ["scene": "\(id)", "reason": "\(error)"])
            broadcastWarning(error.warningCode, "remote change to \(id.fileName) refused: \(error)", scene: id)
            return .refused("\(error)")
        }
        if plan.isNoOp { return .unchanged }
        do throws(SceneSyncError) {
            // Two: one for an app's write that the rename may displace (see writeRemoteChange).
            try reserveRevisions(2)
        } catch {
            return .refused(error.message)
        }
        let path = filePath(id)
        switch await writeRemoteChange(id, bytes: plan.fileBytes) {
        case .written:
            break
        case .appWroteFirst:
            return .superseded
        case .failed(let failure):
            logger.warning("cannot write scene file", metadata: ["file": "\(path)", "error": "\(failure)"])
            broadcastWarning(.writeFailed, "cannot write the remote change to \(id.fileName): \(failure)", scene: id)
            return .refused("\(failure)")
        }
        // The file is written: the change is made, whatever the lifecycle says now (as for a group commit).
        if let record = store.commit(plan) { broadcast(record) }
        publishStatus()
        return .applied
    }

    /// Whether the cluster database is reachable; a change is told to every subscription once (§9).
    public func setClusterAvailable(_ available: Bool, reason: String) {
        guard clusterOutage == available else { return }
        clusterOutage = !available
        if available {
            broadcastWarning(.clusterRestored, "the cluster database is reachable again: \(reason)", scene: nil)
        } else {
            broadcastWarning(.clusterUnavailable, "the cluster database cannot be reached: \(reason)", scene: nil)
        }
    }

    /// A subscription made during an outage learns of it at once.
    func warnOfClusterOutage(_ subscription: Subscription) {
        guard clusterOutage else { return }
        var body: [UInt8] = Array(#""code":""#.utf8)
        body.append(contentsOf: WarningCode.clusterUnavailable.rawValue.utf8)
        body.append(contentsOf: #"","message":"the cluster database cannot be reached"#.utf8)
        body.append(UInt8(ascii: "\""))
        subscription.outbox.enqueue(subscription: subscription.id, event: "warning", body: body)
    }

    /// `stats.cluster`: null without replication.
    func clusterStatsJSON() -> [UInt8] {
        replicator?.statsJSON() ?? Array("null".utf8)
    }
}
