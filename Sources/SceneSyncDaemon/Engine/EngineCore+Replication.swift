import NIOCore
import SceneSyncCore

extension EngineCore {
    /// Connects the replicator; before the start-up merge, so that changes found then are pushed too.
    func attach(replicator: any ChangeReplicator) {
        attachments.replicator = replicator
    }

    /// Hands an accepted local change of a shared scene to the replicator, and returns whether it did; a remote
    /// change is never pushed back.
    @discardableResult
    func replicate(_ record: ChangeRecord) -> Bool {
        guard let replicator = attachments.replicator, record.origin.source != .remote, replicator.shares(record.scene)
        else { return false }
        let bytes = record.kind == .delete ? nil : store.scene(record.scene)?.fileBytes
        replicator.record(LocalChange(record: record, fileBytes: bytes))
        return true
    }

    /// After the start-up merge: what this host holds of every shared scene, for the replicator to find the
    /// changes whose record a crash took and that the merge could not see (``ChangeReplicator/reconcile(holding:)``).
    func reconcileReplica() {
        guard let replicator = attachments.replicator else { return }
        var held: [SceneID: (bytes: [UInt8], format: SceneFormat)] = [:]
        for id in store.sceneIDs where replicator.shares(id) {
            if let scene = store.scene(id) { held[id] = (scene.fileBytes, scene.format) }
        }
        replicator.reconcile(holding: held)
    }

    /// Remote changes waiting for their turn in the pipeline, applied together.
    struct PendingRemote {
        let changes: [RemoteChange]
        let done: ([RemoteOutcome]) -> Void
    }

    /// Applies other hosts' changes, in database order, as changes of origin `remote` (§9). They are one step of
    /// the engine's pipeline, like a group commit: nothing else changes the store while their files are written
    /// off the engine (each scene once, with its final content), an app's write reported before them is merged
    /// first, and the daemon's own renames of them are skipped by the watcher, so the writes are silent. One outcome
    /// per change, in order.
    func applyRemote(_ changes: [RemoteChange], then done: @escaping ([RemoteOutcome]) -> Void) {
        guard !changes.isEmpty else { return done([]) }
        guard lifecycle.permits(.acceptClientChanges) else { return done(changes.map { _ in .stopping }) }
        // An app holds a file open: its content, once closed, is a local change pushed after these, and wins.
        var listed = Set<SceneID>()
        let open = changes.compactMap { change -> SceneID? in
            sceneFiles.isOpen(change.scene) && listed.insert(change.scene).inserted ? change.scene : nil
        }
        waitForWriters(open[...]) { [self] in
            run(pipeline.enqueue(remote: PendingRemote(changes: changes, done: done)))
        }
    }

    /// Waits for the writers of `scenes`, one after the other (see ``waitForWriter(_:then:)``).
    private func waitForWriters(_ scenes: ArraySlice<SceneID>, then done: @escaping () -> Void) {
        guard let first = scenes.first else { return done() }
        waitForWriter(first) { [self] _ in waitForWriters(scenes.dropFirst(), then: done) }
    }

    /// The pipeline step of a batch of remote changes (see ``applyRemote(_:then:)``); `done` gets their outcomes.
    func performRemote(_ changes: [RemoteChange], then done: @escaping ([RemoteOutcome]) -> Void) {
        guard lifecycle.permits(.acceptClientChanges) else { return done(changes.map { _ in .stopping }) }
        // The watcher reports every finished write, and file events run before this step; only a file whose
        // content the store does not know is read here first (as for a group commit).
        var listed = Set<SceneID>()
        let unknown = changes.compactMap { change -> SceneID? in
            guard listed.insert(change.scene).inserted, sceneFiles.mustRead(change.scene, in: store) else { return nil }
            return change.scene
        }
        guard !unknown.isEmpty else { return planRemote(changes, then: done) }
        readFiles(unknown) { [self] contents in
            reserveForMerges(unknown.count) { [self] in
                guard lifecycle.permits(.acceptClientChanges) else { return done(changes.map { _ in .stopping }) }
                for (id, content) in zip(unknown, contents) {
                    if case .success(let bytes) = content, bytes.map(SceneStore.digest) != store.fileDigest(id),
                        bytes != nil || store.scene(id) != nil
                    {
                        mergeFile(id, content: content)
                    }
                }
                planRemote(changes, then: done)
            }
        }
    }

    /// Plans the remote changes on the store as it is now, reserves their revisions and writes their files.
    private func planRemote(_ changes: [RemoteChange], then done: @escaping ([RemoteOutcome]) -> Void) {
        var batch = store.makeBatch()
        var outcomes: [RemoteOutcome] = []
        /// Per change, the index of its plan in the batch when it has one that changes something.
        var planIndex: [Int?] = []
        for change in changes {
            let id = change.scene
            planIndex.append(nil)
            // An app's file still open, or an unread write of an app just merged: a local change pushed after
            // this one, which wins.
            if sceneFiles.isOpen(id) || attachments.replicator?.hasPending(id) == true {
                outcomes.append(.superseded)
                continue
            }
            do throws(SceneFileError) {
                let plan = try store.planReplica(
                    id, bytes: change.fileBytes, format: change.format, origin: change.origin,
                    conflict: change.conflict, in: &batch)
                if plan.isNoOp {
                    outcomes.append(.unchanged)
                } else {
                    outcomes.append(.applied)
                    planIndex[planIndex.count - 1] = batch.plans.count - 1
                }
            } catch {
                logger.warning("refused a remote change", metadata: ["scene": "\(id)", "reason": "\(error)"])
                broadcastWarning(error.warningCode, "remote change to \(id.fileName) refused: \(error)", scene: id)
                outcomes.append(.refused("\(error)"))
            }
        }
        let changeCount = batch.plans.count(where: { !$0.isNoOp })
        guard changeCount > 0 else { return done(outcomes) }
        let planned = RemotePlan(
            changes: changes, batch: batch, outcomes: outcomes, planIndex: planIndex, files: batch.finalFiles)
        // One more per file written, for an app's write that its rename may displace (merged below).
        reserveRevisions(changeCount + planned.files.count) { [self] failure in
            if let failure {
                return done(
                    Self.settled(outcomes, of: changes, planIndex: planIndex) { _ in .refused(failure.message) })
            }
            writeSceneFiles(planned.files) { [self] in commitRemote(planned, written: $0, then: done) }
        }
    }

    /// Remote changes planned, between the plan and the commit.
    private struct RemotePlan {
        let changes: [RemoteChange]
        let batch: SceneStore.ChangeBatch
        let outcomes: [RemoteOutcome]
        let planIndex: [Int?]
        let files: [(scene: SceneID, bytes: [UInt8]?)]
    }

    /// Commits the remote changes whose files are written, and keeps the apps' writes their renames displaced.
    private func commitRemote(
        _ planned: RemotePlan, written: WrittenFiles, then done: @escaping ([RemoteOutcome]) -> Void
    ) {
        let (failures, displaced) = written
        for (id, failure) in failures {
            logger.warning("cannot write scene file", metadata: ["file": "\(filePath(id))", "error": "\(failure)"])
            broadcastWarning(.writeFailed, "cannot write the remote change to \(id.fileName): \(failure)", scene: id)
        }
        // An app's write that a rename displaced is a local change these remote ones did not know of (§3). Local
        // first: that scene's remote changes are superseded, the app's write is merged after them (its own
        // revision, pushed later and so the later arrival in the cluster, with the remote state in its conflict)
        // and put back in the file. Writing the remote state over it instead would leave this host there while
        // the cluster, and every other host, ends on the app's.
        var appWrites: [AppWrite] = []
        for (id, content) in displaced where !isKnownFileContent(content, of: id) && isFileChange(content, of: id) {
            appWrites.append(
                AppWrite(scene: id, content: content, ours: planned.files.first { $0.scene == id }?.bytes ?? nil))
        }
        sceneFiles.replaced(displaced.map(\.0))
        let superseded = Set(appWrites.map(\.scene))
        // The files are written: the changes are made, whatever the lifecycle says now (as for a group commit).
        for record in store.commit(planned.batch, except: Set(failures.keys).union(superseded)) {
            if let record { broadcast(record) }
        }
        keepAppWrites(appWrites[...]) { [self] in
            publishStatus()
            done(
                Self.settled(planned.outcomes, of: planned.changes, planIndex: planned.planIndex) { scene in
                    failures[scene].map { .refused("\($0)") } ?? (superseded.contains(scene) ? .superseded : nil)
                })
        }
    }

    /// An app's write that a remote change's rename displaced, and the remote content written over it.
    private struct AppWrite {
        let scene: SceneID
        let content: FileSystem.Displaced
        let ours: [UInt8]?
    }

    /// Keeps each app's write, one after the other (see ``keepAppWrite(_:_:over:then:)``).
    private func keepAppWrites(_ appWrites: ArraySlice<AppWrite>, then done: @escaping () -> Void) {
        guard let first = appWrites.first else { return done() }
        keepAppWrite(first.scene, first.content, over: first.ours) { [self] in
            keepAppWrites(appWrites.dropFirst(), then: done)
        }
    }

    /// Whether the cluster database is reachable; a change is told to every subscription once (§9).
    func setClusterAvailable(_ available: Bool, reason: String) {
        guard (attachments.clusterOutage == nil) != available else { return }
        if available {
            attachments.clusterOutage = nil
            broadcastWarning(.clusterRestored, "the cluster database is reachable again: \(reason)", scene: nil)
        } else {
            setClusterUnavailable(message: "the cluster database cannot be reached: \(reason)")
        }
    }

    /// Replication stopped for a reason of its own, the whole `message` told to every subscription (§9): a
    /// damaged journal stops it while the database is up, and saying the database cannot be reached would send
    /// the operator to the wrong place. Told even during an outage already told, when this is another reason:
    /// the outage then lasts until a restart, whatever the database does.
    func setClusterUnavailable(message: String) {
        guard attachments.clusterOutage != message else { return }
        attachments.clusterOutage = message
        broadcastWarning(.clusterUnavailable, message, scene: nil)
    }

    /// A subscription made during an outage learns of it at once.
    func warnOfClusterOutage(_ subscription: Subscription) {
        guard let message = attachments.clusterOutage else { return }
        var body: [UInt8] = Array(#""code":""#.utf8)
        body.append(contentsOf: WarningCode.clusterUnavailable.rawValue.utf8)
        body.append(literal: #"","message":"#)
        JSONWriter.appendString(message, to: &body)
        subscription.outbox.enqueue(subscription: subscription.id, event: .warning, body: body)
    }

    /// `stats.cluster`: null without replication.
    func clusterStatsJSON() -> [UInt8] {
        attachments.replicator?.statsJSON() ?? Array("null".utf8)
    }
}
