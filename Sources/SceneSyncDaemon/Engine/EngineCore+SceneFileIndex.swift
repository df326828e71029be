import SceneSyncCore

/// The scene files as a snapshot left them, so that the next start reads only the files that changed since (see
/// ``SceneFileIndex``).
extension EngineCore {
    /// Records the files that hold what `frozen` (just written as a snapshot) holds for them, and whose last change
    /// is older than `settled` by the index's margin. After the snapshot's answer, so that it costs no requester
    /// any time; the daemon ends only once it is written (it is work in flight, see ``InFlightWork``). Then calls
    /// `done`.
    func writeSceneFileIndex(
        of frozen: SceneStore, settled: Int64, leavingOut unsettled: Set<SceneID>, then done: @escaping () -> Void
    ) {
        let directory = settings.scenesDirectory
        let codec = SceneFileIndex.describe(settings.codec)
        let path = stateDirectory.sceneFileIndexPath
        offload {
            let candidates = frozen.filesHoldingState().filter { !unsettled.contains($0.scene) }
            let index = SceneFileIndex(
                epoch: frozen.epoch, revision: frozen.revision, codec: codec,
                files: SceneFileIndex.stamps(of: candidates, in: directory, settled: settled))
            // Not durable, and a failure is harmless: an index that is missing, torn or older than the snapshot
            // restored is ignored, and every file is read.
            try? FileSystem.writeAtomically(
                index.encode(), to: path, tempName: SceneFileIndex.tempName, durable: false, mode: 0o640)
        } then: { _ in
            done()
        }
    }

}
