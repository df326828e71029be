import SceneSyncCore

extension EngineCore {
    /// Each remote change's outcome once its batch's files are written or refused. A change that is made, or that
    /// was `unchanged` only on top of an earlier change of the batch to its scene, shares that scene's `fate`
    /// (its write failed, or an app's write superseded it) when there is one. Left `unchanged`, the replicator would
    /// record the scene as holding a version its file never got, and never take that change again.
    static func settled(
        _ outcomes: [RemoteOutcome], of changes: [RemoteChange], planIndex: [Int?],
        fate: (SceneID) -> RemoteOutcome?
    ) -> [RemoteOutcome] {
        var changedBefore = Set<SceneID>()
        return outcomes.indices.map { index in
            let scene = changes[index].scene
            let dependsOnTheBatch: Bool
            if planIndex[index] != nil {
                changedBefore.insert(scene)
                dependsOnTheBatch = true
            } else {
                dependsOnTheBatch = outcomes[index] == .unchanged && changedBefore.contains(scene)
            }
            guard dependsOnTheBatch, let fate = fate(scene) else { return outcomes[index] }
            return fate
        }
    }
}
