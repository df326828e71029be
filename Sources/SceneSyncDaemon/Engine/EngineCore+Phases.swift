import SceneSyncCore

/// The `phase` op (§6): an app's report of a scene's phase, kept with the scene and passed on to its subscribers.
extension EngineCore {
    /// Keeps the phase with the scene, tells the scene's subscribers, and for `background` answers with a snapshot
    /// that holds every scene-file change made before the request (§5).
    ///
    /// Keeping a phase is not a change: no revision, no `change` event, no write. A scene that does not exist keeps
    /// nothing (see ``SceneStore/recordPhase(_:of:)``), except one that the merge before a background snapshot
    /// creates: its file was saved before the request, so the scene existed when the phase was reported, and an
    /// app that saves a new window's file and then reports `background` finds both in the snapshot. A scene that
    /// existed already is not recorded again after that merge, so a later report that arrived meanwhile (a window
    /// shown again right after it went to the background) stays the last.
    ///
    /// `done` gets the snapshot written for `background`, `nil` for another phase.
    func reportPhase(
        _ phase: ScenePhase, of scene: SceneID,
        then done: @escaping (Result<SnapshotStore.Written?, SceneSyncError>) -> Void
    ) {
        let kept = store.recordPhase(phase, of: scene)
        broadcastPhase(scene: scene, phase: phase.rawValue)
        guard phase == .background else { return done(.success(nil)) }
        snapshotAfterMerging(reason: .phase) { [self] in
            if !kept { store.recordPhase(phase, of: scene) }
        } then: { written in
            done(written.map { $0 })
        }
    }
}
