import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension SceneEngine {
    /// Brings the restored state and the scenes directory together (§5): missing files are written back (or their
    /// scenes deleted), then every file is merged by content.
    ///
    /// Reading the files is most of the cost with many scenes, so it runs on every core, a chunk at a time and one
    /// chunk ahead, while the merging stays here, in directory order. Nothing else uses the engine before start-up
    /// is done, and each file is still read shortly before it is merged (a later write reaches the watcher, whose
    /// events are taken once start-up is done).
    public func mergeDirectory() async {
        // The watcher runs already, and every file is listed and read after this moment: once the merge is done,
        // every change made before it is in the store (see ``SceneFileIndex``).
        let moment = SceneFileIndex.now()
        let started = ContinuousClock.now
        let directory = settings.scenesDirectory
        // Read while the directory is listed; the index is of the snapshot just restored, before any merge.
        // The read is made here, not in the child task, which would reach the engine only at its next suspension.
        let indexRead = restoredSceneFileIndexRead()
        async let loadedIndex = io.run(indexRead)
        let listing = await io.run { () -> Result<(names: [String], removed: [String]), SystemError> in
            do throws(SystemError) {
                let names = try FileSystem.list(directory)
                // A crash between writing a temp file and renaming it left these; the scene's state is in the
                // snapshot or its file, never only there.
                let removed = names.filter { name in
                    SceneEngine.isOwnTempName(name) && unlink(directory + "/" + name) == 0
                }
                return .success((names, removed))
            } catch {
                return .failure(error)
            }
        }
        let names: [String]
        switch listing {
        case .success(let listed):
            names = listed.names
            for name in listed.removed {
                logger.notice("removed a temp file a crash left behind", metadata: ["file": "\(name)"])
            }
        case .failure(let error):
            logger.error("cannot list scenes directory", metadata: ["error": "\(error)"])
            await restoreMissingFiles()
            await rescan(reason: nil)
            publishStatus()
            return
        }
        let listed = ContinuousClock.now
        let files = names.compactMap(SceneID.init(fileName:))
        let present = Set(files)
        // One listing tells which snapshot scenes lack a file, instead of a stat per scene.
        await restoreMissingFiles(present: present)
        let restoredMissing = ContinuousClock.now
        let limit = settings.codec.maxFileBytes
        let io = io
        let index = await loadedIndex
        let indexLoaded = ContinuousClock.now
        var unchanged = 0
        // The next chunk is read while this one is merged, so the reading threads and the engine work at once.
        func read(from start: Int) -> (chunk: [SceneID], contents: Task<[StartupRead], Never>)? {
            guard start < files.count else { return nil }
            let chunk = Array(files[start..<min(files.count, start + SceneEngine.fileChunk)])
            return (
                chunk,
                Task {
                    await SceneEngine.readChangedFiles(chunk, directory: directory, limit: limit, index: index, on: io)
                }
            )
        }
        var start = 0
        var next = read(from: start)
        while let (chunk, reading) = next {
            let contents = await reading.value
            start += chunk.count
            next = read(from: start)
            // Only files that changed since the snapshot are merged, and only a merge takes a revision.
            let changed = contents.count(where: { if case .content = $0 { true } else { false } })
            if changed > 0 { await reserveForMerges(changed) }
            for (scene, content) in zip(chunk, contents) {
                switch content {
                case .content(let content):
                    mergeFile(scene, content: content)
                case .unchanged(let digest):
                    store.noteFileHoldsState(scene, digest: digest)
                    unchanged += 1
                }
            }
        }
        let filesMerged = ContinuousClock.now
        // Scenes whose file is gone (or was just written back by restoreMissingFiles, which reads as unchanged).
        let absent = store.sceneIDs.filter { !present.contains($0) }.sorted()
        if !absent.isEmpty {
            let contents = await readFiles(absent)
            await reserveForMerges(absent.count)
            for (scene, content) in zip(absent, contents) { mergeFile(scene, content: content) }
        }
        report.testCounters.unchangedAtStart = unchanged
        // Only after a whole merge: without the listing, the store may not hold what the files do.
        reconcileReplica()
        sceneFiles.settled(at: moment)
        let merged = ContinuousClock.now
        StartupMemory.returnFreedMemory()
        // The phases of the merge, with their times: the listing, writing back missing files, loading the index of
        // unchanged files, checking and merging the listed files, the scenes without a file, returning freed memory.
        logger.info(
            "merged the scenes directory",
            metadata: [
                "files": "\(files.count)", "unchanged_since_snapshot": "\(unchanged)",
                "duration": "\(ContinuousClock.now - started)", "listing": "\(listed - started)",
                "restore_missing": "\(restoredMissing - listed)", "index": "\(indexLoaded - restoredMissing)",
                "listed_files": "\(filesMerged - indexLoaded)", "absent": "\(merged - filesMerged)",
                "trim": "\(ContinuousClock.now - merged)",
            ])
        publishStatus()
    }

    /// Reads scene files on every thread of the blocking executor; the results are in the order of `scenes`.
    nonisolated static func readFiles(
        _ scenes: [SceneID], directory: String, limit: Int, on io: BlockingIO
    ) async -> [Result<[UInt8]?, SystemError>] {
        await io.runOnEveryThread(count: scenes.count) { index in
            readFile(directory + "/" + scenes[index].fileName, limit: limit)
        }
    }

    /// What the start-up merge learns of one scene file.
    enum StartupRead: Sendable {
        /// Its content (or its absence, or why it could not be read).
        case content(Result<[UInt8]?, SystemError>)
        /// Unchanged since the restored snapshot's index recorded it: it holds the snapshot's content, whose bytes
        /// have this digest.
        case unchanged(digest: UInt64)
    }

    /// ``readFiles(_:directory:limit:on:)``, except that a file the index says is unchanged is not read.
    nonisolated static func readChangedFiles(
        _ scenes: [SceneID], directory: String, limit: Int, index: [SceneID: SceneFileIndex.Stamp], on io: BlockingIO
    ) async -> [StartupRead] {
        // The directory is opened once for the whole batch; without it, each file's own path is looked up.
        let directoryFD = index.isEmpty ? -1 : await io.run { open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let reads = await io.runOnEveryThread(count: scenes.count) { position -> StartupRead in
            let name = scenes[position].fileName
            if let stamp = index[scenes[position]],
                directoryFD >= 0
                    ? SceneFileIndex.isUnchanged(name, in: directoryFD, since: stamp)
                    : SceneFileIndex.isUnchanged(directory + "/" + name, since: stamp)
            {
                return .unchanged(digest: stamp.digest)
            }
            return .content(readFile(directory + "/" + name, limit: limit))
        }
        if directoryFD >= 0 { await io.run { _ = close(directoryFD) } }
        return reads
    }

    private nonisolated static func readFile(_ path: String, limit: Int) -> Result<[UInt8]?, SystemError> {
        do throws(SystemError) {
            return .success(try FileSystem.read(path, limit: limit))
        } catch {
            return .failure(error)
        }
    }
}
