import SceneSyncCore

extension SceneFileState {
    /// Whether what the daemon's rename displaced is what the daemon last read from or wrote to the file: anything
    /// else is an app's write that landed after the daemon last looked (§3), and must not be lost.
    ///
    /// A file already rejected is known too (its warning went out when it was read), and so is what a file system
    /// without exchange cannot tell. A decision of the engine's, not of its shell, so that `SceneFileStateTests`
    /// checks the rule that runs.
    func isKnown(_ displaced: FileSystem.Displaced, of scene: SceneID, in store: SceneStore) -> Bool {
        switch displaced {
        case .unknown:
            return true
        case .none:
            return store.scene(scene) == nil
        case .file(let bytes):
            let digest = SceneStore.digest(bytes)
            if isRejected(scene, digest: digest) { return true }
            if let known = store.fileDigest(scene) { return digest == known }
            return store.scene(scene)?.fileBytes == bytes
        }
    }
}
