import SceneSyncCore

/// One group commit as a value: the groups' requests planned in memory, the scene files to write, and once they
/// are written, the changes committed and each request's outcome. No I/O, so its tests run the very code the engine
/// does; the engine only reserves the revisions, writes the files and sends the answers.
struct GroupCommit {
    /// What became of one request.
    enum Outcome {
        /// Planned as the batch's plan at this index.
        case planned(Int)
        case refused(SceneSyncError)
    }

    /// The batch planned, rebased after an app's displaced writes were merged (see ``rebase(on:after:)``).
    private(set) var batch: SceneStore.ChangeBatch
    /// One outcome per request, group by group, in order, as planned (see ``settledOutcomes(of:failures:on:)``).
    let outcomes: [[Outcome]]
    /// The scenes whose planned changes ``rebase(on:after:)`` moved behind an app's write.
    private(set) var rebasedScenes: Set<SceneID> = []

    /// Plans every request of the groups against the store, in order, each on top of the ones before it. A scene
    /// in `openWriters` is being written by an app: its changes are refused with `stillOpen(scene)`.
    init(
        planning groups: [[EngineCore.ChangeRequest]], on store: SceneStore, openWriters: Set<SceneID>,
        stillOpen: (SceneID) -> SceneSyncError
    ) {
        var batch = store.makeBatch()
        var planned = Set<SceneID>()
        outcomes = groups.map { requests in
            requests.map { request in
                if openWriters.contains(request.scene) { return .refused(stillOpen(request.scene)) }
                return Self.plan(request, on: store, in: &batch, planned: &planned)
            }
        }
        self.batch = batch
    }

    private static func plan(
        _ request: EngineCore.ChangeRequest, on store: SceneStore, in batch: inout SceneStore.ChangeBatch,
        planned: inout Set<SceneID>
    ) -> Outcome {
        let scene = request.scene
        // An app's write merged since the request arrived is overwritten by it: keep it in the conflict record.
        let overwriting =
            !planned.contains(scene) && store.origin(of: scene) == .file
            && store.scene(scene)?.modified != request.seenModified
        do throws(SceneSyncError) {
            try store.plan(
                request.operation, on: scene, ifVersion: request.ifVersion, origin: request.origin,
                overwritingUnreadFile: overwriting, in: &batch)
        } catch {
            return .refused(error)
        }
        planned.insert(scene)
        return .planned(batch.plans.count - 1)
    }

    /// Each touched scene's final content, to be written once: its bytes, or `nil` to remove the file.
    var files: [(scene: SceneID, bytes: [UInt8]?)] { batch.finalFiles }

    /// The revisions to reserve before the files are written: one per change, and one more per file, for an app's
    /// write that its rename may displace (merged with a revision of its own), and one for each no-op that a rebase
    /// on such a write makes a change (``SceneStore/ChangeBatch/revisionsForRebase``). None when nothing changes.
    var revisionsNeeded: Int {
        let changes = batch.plans.count(where: { !$0.isNoOp })
        return changes > 0 ? changes + batch.touchedScenes.count + batch.revisionsForRebase : 0
    }

    /// The app's writes the renames displaced were merged into `store` as the changes they are (§3): the batch's
    /// changes now come after them, and overwrite them with them in their conflict records.
    mutating func rebase(on store: SceneStore, after merged: [SceneID: ChangeRecord]) {
        guard !merged.isEmpty else { return }
        batch = store.rebase(batch, after: merged)
        rebasedScenes.formUnion(merged.keys)
    }

    /// Commits every change but those of the scenes whose write `failed`. Returns each plan's record (`nil` for a
    /// no-op or a change left out) and the revision each plan's answer names (a no-op names the one before it).
    func commit(into store: inout SceneStore, failed: Set<SceneID>) -> (records: [ChangeRecord?], revisions: [UInt64]) {
        let records = store.commit(batch, except: failed)
        var revisions: [UInt64] = []
        revisions.reserveCapacity(records.count)
        var running = batch.baseRevision
        for record in records {
            if let record { running = record.clock.revision }
            revisions.append(running)
        }
        return (records, revisions)
    }
}
