import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// Merging what apps wrote to the scenes directory.
extension EngineCore {
    func filePath(_ scene: SceneID) -> String { settings.scenesDirectory + "/" + scene.fileName }

    /// Merges a scene file's content, as the blocking executor just read it (``readFiles(_:then:)``). Reading at
    /// handling time is what makes rapid rewrites coalesce and the daemon's own write-backs silent. The step that
    /// calls this has reserved its revisions (``reserveRevisions(_:then:)``).
    /// `evenWhileDraining` is for content no longer in the file (see ``mergeDisplaced(_:_:)``).
    @discardableResult
    func mergeFile(
        _ scene: SceneID, content: Result<[UInt8]?, SystemError>, evenWhileDraining: Bool = false
    ) -> ChangeRecord? {
        guard evenWhileDraining || lifecycle.permits(.mergeFileChanges) else { return nil }
        let bytes: [UInt8]?
        do throws(SystemError) {
            bytes = try content.get()
        } catch let error where error.errno == EISDIR {
            // A directory named like a scene file is not one (§3): for the scene there is no file, as the watcher
            // sees it too (it ignores directories). Scans list names without their types, so they meet it here.
            bytes = nil
        } catch {
            report.fileErrors += 1
            metrics.changes.fileErrors.increment()
            logger.warning("cannot read scene file", metadata: ["file": "\(filePath(scene))", "error": "\(error)"])
            broadcastWarning(.invalidFile, "cannot read \(scene.fileName): \(error)", scene: scene)
            return nil
        }
        if bytes != nil || store.scene(scene) != nil {
            if let error = nextRevisionReserved() {
                // Not lost: kept for a retry, and said once per scene so subscribers know the state lags the file.
                if sceneFiles.deferMerge(scene) {
                    broadcastWarning(
                        .writeFailed,
                        "\(scene.fileName) changed but cannot be merged yet: \(error.message); it is merged once the "
                            + "state directory is writable again", scene: scene)
                }
                return nil
            }
        }
        if sceneFiles.merged(scene) {
            logger.notice("merged the file changes that waited for the state directory")
        }
        switch store.applyFile(scene, bytes: bytes) {
        case .changed(let record):
            sceneFiles.accepted(scene)
            metrics.changes.file.increment()
            broadcast(record)
            return record
        case .unchanged:
            sceneFiles.accepted(scene)
            return nil
        case .rejected(let error):
            // Only a rejected file has bytes; warned about once until they change.
            let digest = SceneStore.digest(bytes ?? [])
            guard sceneFiles.rejected(scene, digest: digest) else { return nil }
            report.fileErrors += 1
            metrics.changes.fileErrors.increment()
            logger.warning(
                "rejected scene file", metadata: ["file": "\(filePath(scene))", "reason": "\(error)"])
            broadcastWarning(error.warningCode, "\(scene.fileName): \(error)", scene: scene)
            return nil
        }
    }
}
