import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// Scene files put back when they, or the whole scenes directory, went missing (§5 `restore_missing`).
extension EngineCore {
    /// The scenes directory itself vanished. Recreate it and put every scene file back (or forget the scenes when
    /// `restore_missing` is off), so apps keep finding their state, then calls `done`. The caller restarts the
    /// watcher.
    func directoryGone(then done: @escaping () -> Void) {
        let waitingSyncs = syncBarriers.waitingCookies
        for waiter in sceneFiles.closeAll() { later(waiter) }
        logger.error(
            "scenes directory disappeared; recreating it", metadata: ["directory": "\(settings.scenesDirectory)"])
        let directory = settings.scenesDirectory
        offload { () -> SystemError? in
            do throws(SystemError) {
                try FileSystem.makeDirectory(directory, mode: 0o755)
                return nil
            } catch {
                return error
            }
        } then: { [self] made in
            if let made { logger.error("cannot recreate scenes directory", metadata: ["error": "\(made)"]) }
            broadcastWarning(.rescanned, "the scenes directory was removed and has been recreated", scene: nil)
            restoreMissingFiles { [self] in
                // Sync barriers waiting on a cookie in the old directory would never complete. Those asked for since
                // wait for the rescan that follows the new watch.
                resumePendingSyncs(waitingSyncs, then: done)
            }
        }
    }

    /// Writes back the file of every scene whose file is missing, or deletes those scenes when `restore_missing`
    /// is off (§5), then calls `done`. `missing`, in order, is what a directory listing just found missing (see
    /// ``missingScenes(listed:unchangedSinceIndex:)``); without it, each file is checked. The checks and writes run
    /// on the blocking executor: a removed directory of many scenes does not hold the engine.
    func restoreMissingFiles(missing: [SceneID]? = nil, then done: @escaping () -> Void) {
        let directory = settings.scenesDirectory
        // A reload while the step waits changes no decision it made.
        let restore = settings.restoreMissing
        if let missing { return restoreMissing(missing, restore: restore, directory: directory, then: done) }
        let known = Array(store.sceneIDs)
        offload {
            known.filter { id in
                var exists = stat()
                return stat(directory + "/" + id.fileName, &exists) != 0 && errno == ENOENT
            }
        } then: { [self] missing in
            restoreMissing(missing.sorted(), restore: restore, directory: directory, then: done)
        }
    }

    /// The scenes whose file a directory listing, `listed`, did not find, sorted.
    ///
    /// `unchangedSinceIndex` is how many listed files a start found unchanged since the index of the snapshot it
    /// restored, before anything changed the store. That index records files of the snapshot's scenes only, and each
    /// listed file is another scene's: when there are as many as the store holds scenes, every scene has its file,
    /// and the usual restart needs neither a table of a hundred thousand IDs nor a look-up of each.
    func missingScenes(listed: [SceneID], unchangedSinceIndex: Int?) -> [SceneID] {
        if unchangedSinceIndex == store.count { return [] }
        let present = Set(listed)
        return store.sceneIDs.filter { !present.contains($0) }.sorted()
    }

    private func restoreMissing(
        _ missing: [SceneID], restore: Bool, directory: String, then done: @escaping () -> Void
    ) {
        guard !missing.isEmpty else { return done() }
        guard restore else { return mergeFiles(missing, then: done) }
        // A shared scene the journal last saw this host hold deleted was deleted after the restored snapshot (by
        // this host, or by another whose deletion it applied): its missing file is that deletion, merged as such.
        // Written back, the snapshot's content would differ from the cluster's state and be pushed, undoing the
        // deletion on every host.
        let heldDeleted = attachments.replicator?.scenesHeldDeleted() ?? []
        let deleted = missing.filter(heldDeleted.contains)
        let restored = missing.filter { !heldDeleted.contains($0) }
        let writeBack = { [self] in
            writeBackChunks(
                of: restored, from: restored.startIndex, directory: directory, createdMeanwhile: [], then: done)
        }
        guard !deleted.isEmpty else { return writeBack() }
        logger.notice(
            "shared scenes deleted since the last snapshot stay deleted",
            metadata: ["scenes": "\(deleted.map(\.rawValue).joined(separator: ", "))"])
        mergeFiles(deleted, then: writeBack)
    }

    /// Writes back the missing files of `restored` from `start` on, ``fileChunk`` at a time, then merges those an
    /// app created meanwhile.
    private func writeBackChunks(
        of restored: [SceneID], from start: Int, directory: String, createdMeanwhile: [SceneID],
        then done: @escaping () -> Void
    ) {
        guard start < restored.endIndex else { return mergeFiles(createdMeanwhile, then: done) }
        guard lifecycle.permits(.mergeFileChanges) else { return done() }
        // Only one chunk's bytes are copied out of the store at a time.
        let chunk = restored[start..<min(restored.endIndex, start + EngineCore.fileChunk)]
        let files = chunk.compactMap { id in store.scene(id).map { (id: id, bytes: $0.fileBytes) } }
        offload {
            files.map { file -> Result<Bool, SystemError> in
                do throws(SystemError) {
                    return .success(
                        try FileSystem.createExclusively(
                            file.bytes, at: directory + "/" + file.id.fileName,
                            tempName: EngineCore.tempName(file.id)))
                } catch {
                    return .failure(error)
                }
            }
        } then: { [self] outcomes in
            var created = createdMeanwhile
            for (file, outcome) in zip(files, outcomes) {
                switch outcome {
                case .success(true):
                    store.noteFileWritten(file.id, bytes: file.bytes)
                case .success(false):
                    // An app created the file since it was found missing: that is a change, never overwritten.
                    created.append(file.id)
                case .failure(let error):
                    let path = filePath(file.id)
                    logger.warning("cannot restore scene file", metadata: ["file": "\(path)", "error": "\(error)"])
                    broadcastWarning(.writeFailed, "cannot restore \(file.id.fileName): \(error)", scene: file.id)
                }
            }
            writeBackChunks(
                of: restored, from: chunk.endIndex, directory: directory, createdMeanwhile: created, then: done)
        }
    }
}
