import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension SceneEngine {
    /// Whether what the daemon's rename displaced is what the daemon last read from or wrote to the file: anything
    /// else is an app's write that landed after the daemon last looked (§3), and must not be lost.
    ///
    /// A file already rejected is known too (its warning went out when it was read), and so is what a file system
    /// without exchange cannot tell.
    func isKnownFileContent(_ displaced: FileSystem.Displaced, of scene: SceneID) -> Bool {
        switch displaced {
        case .unknown:
            return true
        case .none:
            return store.scene(scene) == nil
        case .file(let bytes):
            let digest = SceneStore.digest(bytes)
            if let known = store.fileDigest(scene) { return digest == known || digest == rejectedFiles[scene] }
            return digest == rejectedFiles[scene] || store.scene(scene)?.fileBytes == bytes
        }
    }

    /// Merges an app's write that the daemon's rename displaced, as the change from the file it is (origin `file`,
    /// its own revision, §3). It is merged even while draining: the step that displaced it is committed whatever
    /// the lifecycle says now, and the file no longer holds it for the next start to find.
    @discardableResult
    func mergeDisplaced(_ scene: SceneID, _ displaced: FileSystem.Displaced) -> ChangeRecord? {
        switch displaced {
        case .unknown:
            return nil
        case .none:
            return mergeFile(scene, content: .success(nil), evenWhileDraining: true)
        case .file(let bytes):
            return mergeFile(scene, content: .success(bytes), evenWhileDraining: true)
        }
    }

    /// What became of the write of another host's change (see ``writeRemoteChange(_:bytes:)``).
    enum RemoteWrite {
        case written
        case failed(SystemError)
        /// An app's write was displaced by it: that write is merged and back in the file, and supersedes the
        /// remote change.
        case appWroteFirst
    }

    /// Writes another host's change to the scene file (§9), as a client change is written.
    ///
    /// An app's write that the rename displaced is a local change the remote one did not know of. Local first: it
    /// is merged (its own revision, pushed after the remote change and so the later arrival in the cluster, with
    /// the remote state in its conflict), and put back in the file. Writing the remote change over it instead
    /// would leave this host on the remote state while the cluster, and every other host, ends on the app's.
    func writeRemoteChange(_ id: SceneID, bytes: [UInt8]?) async -> RemoteWrite {
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        let hooks = settings.testHooks
        let written: Result<FileSystem.Displaced, SystemError> = await fileIO.run {
            if hooks { SceneEngine.landRacingAppWrite(id, directory: directory) }
            do throws(SystemError) {
                return .success(
                    try FileSystem.replace(
                        directory + "/" + id.fileName, with: bytes, tempName: SceneEngine.tempName(id),
                        readLimit: limit))
            } catch {
                return .failure(error)
            }
        }
        let displaced: FileSystem.Displaced
        switch written {
        case .failure(let error): return .failed(error)
        case .success(let found): displaced = found
        }
        let merged = isKnownFileContent(displaced, of: id) ? nil : mergeDisplaced(id, displaced)
        if !rejectedFiles.isEmpty { rejectedFiles[id] = nil }
        // An app's content that is no change (the same path, or a rejected file) leaves the remote change as it is.
        guard merged != nil else { return .written }
        let ours: FileSystem.Displaced = bytes.map(FileSystem.Displaced.file) ?? .none
        let putBack = await fileIO.run {
            SceneEngine.putBack(displaced, over: ours, directory: directory, scene: id, readLimit: limit)
        }
        switch putBack {
        case .success(let kept):
            // The app wrote again while its first write was put back: that one is kept, and merged as well.
            if kept != displaced, !isKnownFileContent(kept, of: id) { mergeDisplaced(id, kept) }
        case .failure(let error):
            logger.warning(
                "cannot put an app's write back", metadata: ["file": "\(filePath(id))", "error": "\(error)"])
            broadcastWarning(.writeFailed, "cannot write \(id.fileName) back: \(error)", scene: id)
        }
        return .appWroteFirst
    }

    /// Puts `content` back in a scene file that holds `ours`, on the I/O queue. Should an app write the file yet
    /// again meanwhile, its newer content is what stays.
    ///
    /// - Returns: the content the file holds in the end.
    nonisolated static func putBack(
        _ content: FileSystem.Displaced, over ours: FileSystem.Displaced, directory: String, scene: SceneID,
        readLimit: Int
    ) -> Result<FileSystem.Displaced, SystemError> {
        var keep = content
        var expected = ours
        for _ in 0..<16 {
            let bytes: [UInt8]?
            switch keep {
            case .unknown: return .success(keep)
            case .none: bytes = nil
            case .file(let content): bytes = content
            }
            do throws(SystemError) {
                let found = try FileSystem.replace(
                    directory + "/" + scene.fileName, with: bytes, tempName: tempName(scene), readLimit: readLimit)
                if found == expected || found == .unknown { return .success(keep) }
                expected = keep
                keep = found
            } catch {
                return .failure(error)
            }
        }
        return .success(keep)
    }

    /// The test hook's file (`SCENESYNC_TEST_HOOKS=1`) for a scene: see ``landRacingAppWrite(_:directory:)``.
    static func racingWriteName(_ scene: SceneID) -> String { ".scenesync-test-race-" + scene.fileName }

    /// Test hook: an app's write landing between the daemon's last look at a scene file and its rename of the
    /// daemon's own content over it, the window §3 requires to be safe. When `.scenesync-test-race-<ID>.json`
    /// exists, it is renamed over `<ID>.json` as an app's atomic write would be, right before the daemon's rename;
    /// an empty one removes `<ID>.json` instead. Runs on the I/O queue, only with test hooks on.
    nonisolated static func landRacingAppWrite(_ scene: SceneID, directory: String) {
        let racing = directory + "/" + racingWriteName(scene)
        let path = directory + "/" + scene.fileName
        guard let content = try? FileSystem.read(racing, limit: 1) else { return }
        if content.isEmpty {
            try? FileSystem.remove(racing)
            try? FileSystem.remove(path)
        } else {
            _ = rename(racing, path)
        }
    }
}
