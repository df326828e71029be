import SceneSyncCore

extension GroupCommit {
    /// Each request's outcome once the files are written, as its answer tells it.
    ///
    /// A change refused because of a change planned before it in the batch, to the same scene, was refused on a
    /// state the scene has not had as planned:
    /// - When that scene's write failed, the state never came to be, so the refusal is the write's failure
    ///   (`unavailable`), as for the changes that were planned: a `conflict` naming the planned state, or a
    ///   `not_found` after a planned delete, would describe a scene that never was.
    /// - When an app's write was merged ahead of the batch's changes to that scene (``rebase(on:after:)``), every
    ///   one of them took the next version: a `conflict` must name the version the scene then had, not the planned
    ///   one, which in the history belongs to the state before it. Other refusals stand: the rebase keeps each
    ///   planned path, format and deletion.
    ///
    /// And a deletion planned on a scene that an app removed in the rename's window deletes nothing: the app's removal
    /// came first, so the scene no longer existed, and it is `not_found`, as any deletion of a missing scene is (other
    /// changes create the scene again). Call it once the batch is rebased on `store`, before it is committed.
    func settledOutcomes(
        of requests: [[EngineCore.ChangeRequest]], failures: [SceneID: SystemError], on store: SceneStore
    ) -> [[Outcome]] {
        guard !failures.isEmpty || !rebasedScenes.isEmpty else { return outcomes }
        // The plan each refusal came after, per scene: the state it was decided on.
        var lastPlan: [SceneID: Int] = [:]
        return zip(requests, outcomes).map { requests, outcomes in
            zip(requests, outcomes).map { request, outcome in
                switch outcome {
                case .planned(let index):
                    defer { lastPlan[request.scene] = index }
                    guard case .delete = request.operation, rebasedScenes.contains(request.scene),
                        failures[request.scene] == nil
                    else { return outcome }
                    let before = lastPlan[request.scene].map { batch.plans[$0].state } ?? store.scene(request.scene)
                    return before == nil ? .refused(SceneSyncError(.notFound, "no scene \(request.scene)")) : outcome
                case .refused(let error):
                    guard let index = lastPlan[request.scene] else { return outcome }
                    if let failure = failures[request.scene] {
                        return .refused(Self.writeFailure(request.scene, failure))
                    }
                    guard rebasedScenes.contains(request.scene), error.code == .conflict,
                        let ifVersion = request.ifVersion
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
