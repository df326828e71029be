extension SceneStore {
    /// The client changes of one group commit, planned in memory before any file is written.
    ///
    /// Writing a scene file is the slow part of a change, and a burst often changes one scene many times: the batch
    /// plans every change on top of the ones before it, so each scene it touches is written once, with its final
    /// content. Scenes are independent, so when one scene's write fails only that scene's changes are left out of the
    /// commit, and the others still get consecutive revisions.
    public struct ChangeBatch: Sendable {
        /// The revision the batch was planned at; the store must not have changed when it is committed.
        public let baseRevision: UInt64
        /// Every planned change, in the order it was asked for (no-ops included, for their answers).
        public private(set) var plans: [Plan] = []
        /// Each touched scene's state after the batch's changes so far; an inner `nil` is a deleted scene.
        private var working: [SceneID: Entry?] = [:]
        /// The scenes with at least one real change, in the order they were first changed.
        public private(set) var touchedScenes: [SceneID] = []

        init(baseRevision: UInt64) {
            self.baseRevision = baseRevision
        }

        /// What each touched scene's file must hold once the batch is written: its bytes, or `nil` to remove it.
        public var finalFiles: [(scene: SceneID, bytes: [UInt8]?)] {
            touchedScenes.map { scene in
                // The last real change of the scene decides its file.
                let last = plans.last { $0.scene == scene && !$0.isNoOp }
                return (scene, last?.fileBytes)
            }
        }

        /// How many more revisions a rebase may take than the batch's own changes (see
        /// ``SceneStore/rebase(_:after:)``): one for each no-op ahead of its scene's first change in the batch, which
        /// becomes a change when that scene's write displaced an app's write. Counted as plans are recorded, so that
        /// a group commit reads it without another walk of its plans.
        public private(set) var revisionsForRebase = 0
        /// No-ops of scenes the batch has not changed yet, by scene: they count once their scene is changed.
        private var noOpsAheadOfAChange: [SceneID: Int] = [:]

        /// Whether one of the batch's changes so far is of `id`.
        fileprivate func hasChanged(_ id: SceneID) -> Bool { working[id] != nil }

        fileprivate func current(_ id: SceneID, in store: SceneStore) -> Entry? {
            if let pending = working[id] { return pending }
            return store.entries[id]
        }

        fileprivate mutating func record(_ plan: Plan) {
            plans.append(plan)
            guard !plan.isNoOp else {
                if working[plan.scene] == nil { noOpsAheadOfAChange[plan.scene, default: 0] += 1 }
                return
            }
            if working[plan.scene] == nil {
                touchedScenes.append(plan.scene)
                revisionsForRebase += noOpsAheadOfAChange.removeValue(forKey: plan.scene) ?? 0
            }
            working[plan.scene] = .some(
                plan.state.map { Entry(state: $0, origin: plan.origin, fileVersion: nil, fileDigest: nil) })
        }
    }

    /// An empty batch based on the current revision.
    public func makeBatch() -> ChangeBatch {
        ChangeBatch(baseRevision: revision)
    }

    /// Checks a client change against the state the batch has reached, and adds it to the batch. A refused change
    /// throws and leaves the batch as it was.
    ///
    /// - Parameter overwritingUnreadFile: as for ``plan(_:on:ifVersion:origin:overwritingUnreadFile:)``.
    @discardableResult
    public func plan(
        _ operation: Operation, on id: SceneID, ifVersion: UInt64? = nil, origin: Origin,
        overwritingUnreadFile: Bool = false, in batch: inout ChangeBatch
    ) throws(SceneSyncError) -> Plan {
        precondition(batch.baseRevision == revision, "a batch must be planned at the revision it was made at")
        let plan = try plan(
            operation, on: id, ifVersion: ifVersion, origin: origin, overwritingUnreadFile: overwritingUnreadFile,
            current: batch.current(id, in: self))
        batch.record(plan)
        return plan
    }

    /// The batch as if the file changes in `merged` had come before it: what is left when the daemon's write of a
    /// scene file displaced an app's write it had not read (§3), and that write was merged since the batch was
    /// planned.
    ///
    /// The files are written already, so every change keeps its resulting path and bytes; the changes to a scene
    /// in `merged` are numbered after the app's change (a scene the app removed is created again, at version 1),
    /// and the first of them records the app's path as the state it overwrote. Other scenes' changes are as they
    /// were.
    ///
    /// A no-op ahead of its scene's first change in the batch was a no-op against the state before the app's write
    /// (a `set` of the path the scene had). After that write it is a change like the others: the client's path,
    /// overwriting the app's. Kept a no-op, it was answered with the version of the app's state, whose path it did
    /// not set, and a client that took that answer for its own path missed the app's change. A no-op after one of
    /// the batch's changes to its scene stays one: it is measured against that change, which the rebase keeps.
    /// ``ChangeBatch/revisionsForRebase`` counts the revisions this can take.
    public func rebase(_ batch: ChangeBatch, after merged: [SceneID: ChangeRecord]) -> ChangeBatch {
        var rebased = ChangeBatch(baseRevision: revision)
        var overwritten = Set<SceneID>()
        for plan in batch.plans {
            guard let record = merged[plan.scene] else {
                rebased.record(plan.rebased(state: plan.state, conflict: plan.conflict, at: revision))
                continue
            }
            let current = rebased.current(plan.scene, in: self)
            if plan.isNoOp, rebased.hasChanged(plan.scene) {
                rebased.record(plan.rebased(state: current?.state ?? plan.state, conflict: nil, at: revision))
                continue
            }
            var conflict = plan.conflict
            if overwritten.insert(plan.scene).inserted {
                conflict = record.path.map { Conflict(path: $0, origin: record.origin) }
            }
            let state = plan.state.map { planned in
                var state = planned
                state.version = (current?.state.version ?? 0) + 1
                state.created = current?.state.created ?? revision + 1
                state.phase = current?.state.phase
                return state
            }
            guard plan.isNoOp else {
                rebased.record(plan.rebased(state: state, conflict: conflict, at: revision))
                continue
            }
            // Never written on its own: the file holds the batch's last change of the scene, which comes after it.
            rebased.record(plan.madeAChange(state: state, conflict: conflict, at: revision))
        }
        return rebased
    }

    /// Checks another host's change (§9) against the state the batch has reached, and adds it to the batch: the
    /// receiving host applies several database changes with one write per scene, in database order. A refused
    /// change throws and leaves the batch as it was.
    @discardableResult
    public func planReplica(
        _ id: SceneID, bytes: [UInt8]?, format: SceneFormat?, origin: Origin, conflict: Conflict?,
        in batch: inout ChangeBatch
    ) throws(SceneFileError) -> Plan {
        precondition(batch.baseRevision == revision, "a batch must be planned at the revision it was made at")
        let plan = try planReplica(
            id, bytes: bytes, format: format, origin: origin, conflict: conflict, current: batch.current(id, in: self))
        batch.record(plan)
        return plan
    }

    /// Commits every change of the batch except those of the `failed` scenes, in the batch's order.
    ///
    /// - Returns: One entry per plan of the batch: its change record, or `nil` for a no-op or a left-out change.
    public mutating func commit(_ batch: ChangeBatch, except failed: Set<SceneID> = []) -> [ChangeRecord?] {
        precondition(batch.baseRevision == revision, "a batch must be committed before any other change")
        return batch.plans.map { plan in
            failed.contains(plan.scene) ? nil : commitUnchecked(plan)
        }
    }
}

extension SceneStore.Plan {
    /// The same change, with its state and conflict decided again at `revision` (see ``SceneStore/rebase(_:after:)``).
    fileprivate func rebased(state: SceneState?, conflict: Conflict?, at revision: UInt64) -> Self {
        Self(
            scene: scene, state: state, fileBytes: fileBytes, isNoOp: isNoOp, origin: origin, conflict: conflict,
            baseRevision: revision)
    }

    /// A no-op that an app's write, merged ahead of it, made a change to `state` (see ``SceneStore/rebase(_:after:)``).
    fileprivate func madeAChange(state: SceneState?, conflict: Conflict?, at revision: UInt64) -> Self {
        Self(
            scene: scene, state: state, fileBytes: state?.fileBytes, isNoOp: false, origin: origin, conflict: conflict,
            baseRevision: revision)
    }
}
