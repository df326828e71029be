import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension EngineCore {
    /// See ``SceneFileState/isKnown(_:of:in:)``.
    func isKnownFileContent(_ displaced: FileSystem.Displaced, of scene: SceneID) -> Bool {
        sceneFiles.isKnown(displaced, of: scene, in: store)
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

    /// Writes a step's scene files (see ``fileStep(files:bytes:_:then:)``), each once with its final content
    /// (`nil` removes it), and hands `done` the writes that failed and what each successful one displaced.
    func writeSceneFiles(_ files: [(scene: SceneID, bytes: [UInt8]?)], then done: @escaping (WrittenFiles) -> Void) {
        guard !files.isEmpty else { return done(([:], [])) }
        let write = sceneFileWriter
        fileStep(files: files.count, bytes: Self.byteCount(of: files), { write(files) }, then: done)
    }

    /// How many bytes a step writes: with the number of files, what decides whether it runs on the engine's thread.
    static func byteCount(of files: [(scene: SceneID, bytes: [UInt8]?)]) -> Int {
        files.reduce(0) { $0 + ($1.bytes?.count ?? 0) }
    }

    /// What a step's writes did: the scenes whose write failed, and what each successful one displaced.
    typealias WrittenFiles = (
        failures: [SceneID: SystemError], displaced: [(scene: SceneID, content: FileSystem.Displaced)]
    )

    /// Writes a step's scene files on the calling thread: for a step small enough for the engine's own.
    func writeSceneFilesNow(_ files: [(scene: SceneID, bytes: [UInt8]?)]) -> WrittenFiles {
        guard !files.isEmpty else { return ([:], []) }
        return sceneFileWriter(files)
    }

    /// The blocking write of a step's files, with what it needs of the settings, for any thread.
    var sceneFileWriter: @Sendable ([(scene: SceneID, bytes: [UInt8]?)]) -> WrittenFiles {
        let directory = settings.scenesDirectory
        let prefix = directory + "/"
        let limit = settings.codec.maxFileBytes
        let hooks = settings.testHooks
        let fault = io.sceneWriteFault
        let lastWrites = lastWrites
        return { files in
            var failed: [SceneID: SystemError] = [:]
            var found: [(scene: SceneID, content: FileSystem.Displaced)] = []
            for (scene, bytes) in files {
                if hooks { EngineCore.landRacingAppWrite(scene, directory: directory) }
                let tempPath = prefix + EngineCore.tempName(scene)
                if let code = fault?(scene) {
                    lastWrites.forget(scene)
                    failed[scene] = SystemError("write", tempPath, errno: code)
                    continue
                }
                do throws(SystemError) {
                    let replaced = try FileSystem.replace(
                        prefix + scene.fileName, with: bytes, tempPath: tempPath, readLimit: limit,
                        after: lastWrites.file(of: scene))
                    if let stamp = replaced.written, let bytes {
                        lastWrites.wrote(WrittenFile(stamp: stamp, bytes: bytes), of: scene)
                    } else {
                        lastWrites.forget(scene)
                    }
                    found.append((scene, replaced.displaced))
                } catch {
                    lastWrites.forget(scene)
                    failed[scene] = error
                }
            }
            return (failed, found)
        }
    }

    /// Whether merging a displaced app's write would change the scene: one that is no change (the same path in
    /// other bytes, or a rejected file) leaves another host's change standing. Merges into a copy of the store,
    /// which copies its table: this runs only when an app's write was displaced, a rare race.
    func isFileChange(_ displaced: FileSystem.Displaced, of scene: SceneID) -> Bool {
        var probe = store
        switch displaced {
        case .unknown:
            return false
        case .none:
            if case .changed = probe.applyFile(scene, bytes: nil) { return true }
        case .file(let bytes):
            if case .changed = probe.applyFile(scene, bytes: bytes) { return true }
        }
        return false
    }

    /// Keeps an app's write that a remote change's rename displaced (see ``performRemote(_:then:)``): merges it as
    /// the file change it is, then puts it back in the file over `ours`, the remote content written.
    func keepAppWrite(
        _ id: SceneID, _ displaced: FileSystem.Displaced, over ours: [UInt8]?, then done: @escaping () -> Void
    ) {
        mergeDisplaced(id, displaced)
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        let written: FileSystem.Displaced = ours.map(FileSystem.Displaced.file) ?? .none
        offload {
            EngineCore.putBack(displaced, over: written, directory: directory, scene: id, readLimit: limit)
        } then: { [self] putBack in
            keptAppWrite(id, displaced, putBack)
            done()
        }
    }

    private func keptAppWrite(
        _ id: SceneID, _ displaced: FileSystem.Displaced, _ putBack: Result<FileSystem.Displaced, SystemError>
    ) {
        switch putBack {
        case .success(let kept):
            // The app wrote again while its first write was put back: that one is kept, and merged as well.
            if kept != displaced, !isKnownFileContent(kept, of: id) { mergeDisplaced(id, kept) }
        case .failure(let error):
            logger.warning(
                "cannot put an app's write back", metadata: ["file": "\(filePath(id))", "error": "\(error)"])
            broadcastWarning(.writeFailed, "cannot write \(id.fileName) back: \(error)", scene: id)
        }
    }

    /// Puts `content` back in a scene file that holds `ours`, on the blocking executor. Should an app write the file yet
    /// again meanwhile, its newer content is what stays.
    ///
    /// - Returns: the content the file holds in the end.
    static func putBack(
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
    /// an empty one removes `<ID>.json` instead. Runs on the blocking executor, only with test hooks on.
    static func landRacingAppWrite(_ scene: SceneID, directory: String) {
        let racing = directory + "/" + racingWriteName(scene)
        let path = directory + "/" + scene.fileName
        guard let content = try? FileSystem.read(racing, limit: 1) else { return }  // no race was staged
        if content.isEmpty {
            // Test hook only: a removal that fails leaves the race unplayed, which the test sees.
            try? FileSystem.remove(racing)
            try? FileSystem.remove(path)
        } else {
            _ = rename(racing, path)
        }
    }
}
