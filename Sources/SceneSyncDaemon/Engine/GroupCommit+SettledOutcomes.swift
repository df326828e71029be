import SceneSyncCore

extension GroupCommit {
    /// Each request's outcome once the files are written, as its answer tells it.
    ///
    /// A change refused because of a change planned before it in the batch, to the same scene, was refused on a
    /// state the scene has not had as planned:
    /// - When that scene's write failed, the state never came to be (unless every plan before it was a no-op), so
    ///   the refusal is the write's failure (`unavailable`), as for the changes that were planned: a `conflict`
    ///   naming the planned state, or a `not_found` after a planned delete, would describe a scene that never was.
    /// - When an app's write was merged ahead of the batch's changes to that scene (``rebase(on:after:)``), every
    ///   one of them took the next version: a `conflict` must name the version the scene then had, not the planned
    ///   one, which in the history belongs to the state before it. Other refusals stand: the rebase keeps each
    ///   planned path, format and deletion.
    ///
    /// And a deletion planned on a scene that an app removed in the rename's window deletes nothing: the app's removal
    /// came first, so the scene no longer existed, and it is refused as a deletion of a missing scene is (`not_found`,
    /// or a `conflict` when it names a version); other changes create the scene again. Call it once the batch is
    /// rebased on `store`, before it is committed.
    func settledOutcomes(
        of requests: [[EngineCore.ChangeRequest]], failures: [SceneID: SystemError], on store: SceneStore
    ) -> [[Outcome]] {
        guard !failures.isEmpty || !rebasedScenes.isEmpty else { return outcomes }
        // The plan each refusal came after, per scene: the state it was decided on. And the last that changed the
        // scene: a refusal after no-ops only was decided on the scene as it was, which a failed write leaves.
        var lastPlan: [SceneID: Int] = [:]
        var lastChange: [SceneID: Int] = [:]
        return zip(requests, outcomes).map { requests, outcomes in
            zip(requests, outcomes).map { request, outcome in
                switch outcome {
                case .planned(let index):
                    defer {
                        lastPlan[request.scene] = index
                        if !batch.plans[index].isNoOp { lastChange[request.scene] = index }
                    }
                    guard case .delete = request.operation, rebasedScenes.contains(request.scene),
                        failures[request.scene] == nil
                    else { return outcome }
                    let before = lastPlan[request.scene].map { batch.plans[$0].state } ?? store.scene(request.scene)
                    guard before == nil else { return outcome }
                    // As planning it now would: a version it names first, then the missing scene.
                    let named = request.ifVersion.flatMap { version in
                        SceneStore.versionConflict(request.scene, expected: version, current: nil)
                    }
                    return .refused(named ?? SceneSyncError(.notFound, "no scene \(request.scene)"))
                case .refused(let error):
                    if let failure = failures[request.scene], lastChange[request.scene] != nil {
                        return .refused(Self.writeFailure(request.scene, failure))
                    }
                    guard let index = lastPlan[request.scene], rebasedScenes.contains(request.scene),
                        error.code == .conflict, let ifVersion = request.ifVersion
                    else { return outcome }
                    let state = batch.plans[index].state
                    return .refused(
                        SceneStore.versionConflict(request.scene, expected: ifVersion, current: state)
                            ?? SceneSyncError(
                                .unavailable,
                                "scene \(request.scene) changed while this change was decided: send it again"))
                }
            }
        }
    }

    /// The refusal of a change to a scene whose file could not be written: nothing of it was changed.
    static func writeFailure(_ scene: SceneID, _ failure: SystemError) -> SceneSyncError {
        SceneSyncError(.unavailable, "cannot write \(scene.fileName): \(failure)")
    }
}
