import SceneSyncCore

/// The scene files as a snapshot left them, so that the next start reads only the files that changed since (see
/// ``SceneFileIndex``).
extension SceneEngine {
    /// Records the files that hold what `frozen` (just written as a snapshot) holds for them, and whose last change
    /// is older than `settled` by the index's margin. After the snapshot's answer, so that it costs no requester
    /// any time; the daemon ends only once it is written (it is one of the engine's tasks).
    func writeSceneFileIndex(of frozen: SceneStore, settled: Int64, leavingOut unsettled: Set<SceneID>) async {
        let directory = settings.scenesDirectory
        let codec = SceneFileIndex.describe(settings.codec)
        let path = stateDirectory.sceneFileIndexPath
        await io.run {
            let candidates = frozen.filesHoldingState().filter { !unsettled.contains($0.scene) }
            let index = SceneFileIndex(
                epoch: frozen.epoch, revision: frozen.revision, codec: codec,
                files: SceneFileIndex.stamps(of: candidates, in: directory, settled: settled))
            // Not durable, and a failure is harmless: an index that is missing, torn or older than the snapshot
            // restored is ignored, and every file is read.
            try? FileSystem.writeAtomically(
                index.encode(), to: path, tempName: SceneFileIndex.tempName, durable: false, mode: 0o640)
        }
    }

    /// The read of the index written with the snapshot just restored, for the blocking executor: the index if it
    /// matches that snapshot and the codec's limits. What it must match is taken here, when this is called, so the
    /// read may run any time later, beside the listing, whatever the merge changed meanwhile.
    func restoredSceneFileIndexRead() -> @Sendable () -> [SceneID: SceneFileIndex.Stamp] {
        let path = stateDirectory.sceneFileIndexPath
        let (epoch, revision) = (store.epoch, store.revision)
        let codec = SceneFileIndex.describe(settings.codec)
        return {
            guard let bytes = try? FileSystem.read(path, limit: 1 << 30).flatMap({ $0 }),
                let index = SceneFileIndex.decode(bytes), index.epoch == epoch, index.revision == revision,
                index.codec == codec
            else { return [:] }
            return index.files
        }
    }
}
