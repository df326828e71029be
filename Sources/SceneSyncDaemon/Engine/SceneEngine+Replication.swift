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

    /// Applies another host's change as a change of origin `remote` (§9): like a client change, an app's unread
    /// write to the file is merged first and the file is written before the commit, so the daemon's own write of
    /// it reads back as no change.
    public func applyRemote(_ change: RemoteChange) async -> RemoteOutcome {
        guard lifecycle.permits(.acceptClientChanges) else { return .stopping }
        let id = change.scene
        if replicator?.hasPending(id) == true { return .superseded }
        guard await waitForWriter(id) else {
            // The writer's change, once closed, is pushed and commits after this one.
            return .superseded
        }
        guard lifecycle.permits(.acceptClientChanges) else { return .stopping }
        let path = filePath(id)
        do throws(SystemError) {
            let onDisk = try FileSystem.read(path, limit: settings.codec.maxFileBytes)
            if onDisk.map(SceneStore.digest) != store.fileDigest(id), onDisk != nil || store.scene(id) != nil {
                mergeFile(id, content: .success(onDisk))
            }
        } catch {}
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
            try reserveNextRevision()
        } catch {
            return .refused(error.message)
        }
        do throws(SystemError) {
            if let bytes = plan.fileBytes {
                try FileSystem.writeAtomically(bytes, to: path, tempName: SceneEngine.tempName(id))
            } else {
                try FileSystem.remove(path)
            }
        } catch {
            logger.warning("cannot write scene file", metadata: ["file": "\(path)", "error": "\(error)"])
            broadcastWarning(.writeFailed, "cannot write the remote change to \(id.fileName): \(error)", scene: id)
            return .refused("\(error)")
        }
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
