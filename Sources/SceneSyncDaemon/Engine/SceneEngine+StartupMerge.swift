import Logging
import SceneSyncCore

extension SceneEngine {
    /// Brings the restored state and the scenes directory together (§5): missing files are written back (or their
    /// scenes deleted), then every file is merged by content. `scan` is the listing and check the restore made
    /// while it decoded the snapshot, after the watch started.
    ///
    /// Reading the files is most of the cost with many scenes (the scan's check spares the unchanged ones), so it
    /// runs on every core, a chunk at a time and one chunk ahead, while the merging stays here, in directory order.
    /// Nothing else uses the engine before start-up is done, and each file is still read shortly before it is
    /// merged (a later write reaches the watcher, whose events are taken once start-up is done).
    package func mergeDirectory(_ scan: StartupScan) async {
        let started = ContinuousClock.now
        let directory = settings.scenesDirectory
        let listing: StartupScan.Listing
        switch scan.listing {
        case .success(let listed):
            listing = listed
            for name in listed.removed {
                logger.notice("removed a temp file a crash left behind", metadata: ["file": "\(name)"])
            }
        case .failure(let error):
            logger.error("cannot list scenes directory", metadata: ["error": "\(error)"])
            await completion { restoreMissingFiles(then: $0) }
            await completion { rescan(reason: nil, then: $0) }
            publishStatus()
            return
        }
        // Whether the scan's check is of the restored state is decided before anything here can change the store:
        // the index is of the snapshot just restored, before any merge.
        let unchangedDigests = listing.unchangedDigests(
            epoch: store.epoch, revision: store.revision, codec: SceneFileIndex.describe(settings.codec))
        if listing.check != nil, unchangedDigests == nil {
            logger.info("the scene files were checked against an index of another state: every file is read")
        }
        let files = listing.files
        // One listing tells which snapshot scenes lack a file, instead of a stat per scene.
        await completion { restoreMissingFiles(present: listing.present, then: $0) }
        let restoredMissing = ContinuousClock.now
        let limit = settings.codec.maxFileBytes
        let io = io
        var unchanged = 0
        // The next chunk is read while this one is merged, so the reading threads and the engine work at once.
        func read(from start: Int) -> (chunk: [SceneID], contents: Task<[StartupRead], Never>)? {
            guard start < files.count else { return nil }
            let end = min(files.count, start + SceneEngine.fileChunk)
            let chunk = Array(files[start..<end])
            let digests = unchangedDigests.map { Array($0[start..<end]) } ?? Array(repeating: nil, count: chunk.count)
            return (
                chunk,
                Task {
                    await SceneEngine.readChangedFiles(
                        chunk, unchanged: digests, directory: directory, limit: limit, on: io)
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
            if changed > 0 { await completion { reserveForMerges(changed, then: $0) } }
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
        let present = listing.present
        let absent = store.sceneIDs.filter { !present.contains($0) }.sorted()
        if !absent.isEmpty {
            let contents = await completion { readFiles(absent, then: $0) }
            await completion { reserveForMerges(absent.count, then: $0) }
            for (scene, content) in zip(absent, contents) { mergeFile(scene, content: content) }
        }
        report.testCounters.unchangedAtStart = unchanged
        // Only after a whole merge: without the listing, the store may not hold what the files do.
        reconcileReplica()
        sceneFiles.settled(at: scan.moment)
        let merged = ContinuousClock.now
        StartupMemory.returnFreedMemory()
        // The phases of the merge, with their times (the listing, the index and the check of each file were logged
        // by the restore, beside whose decode they ran): writing back missing files, reading the changed listed files
        // and merging every listed one, the scenes without a file, returning freed memory.
        logger.info(
            "merged the scenes directory",
            metadata: [
                "files": "\(files.count)", "unchanged_since_snapshot": "\(unchanged)",
                "duration": "\(ContinuousClock.now - started)", "restore_missing": "\(restoredMissing - started)",
                "listed_files": "\(filesMerged - restoredMissing)", "absent": "\(merged - filesMerged)",
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

    /// ``readFiles(_:directory:limit:on:)`` of the files `unchanged` has no digest for (parallel to `scenes`): the
    /// others are still as the index recorded them, and are not read.
    nonisolated static func readChangedFiles(
        _ scenes: [SceneID], unchanged: [UInt64?], directory: String, limit: Int, on io: BlockingIO
    ) async -> [StartupRead] {
        let changed = scenes.indices.filter { unchanged[$0] == nil }
        var contents: [Result<[UInt8]?, SystemError>] = []
        if !changed.isEmpty {
            contents = await readFiles(changed.map { scenes[$0] }, directory: directory, limit: limit, on: io)
        }
        var reads: [StartupRead] = []
        reads.reserveCapacity(scenes.count)
        var read = 0
        for digest in unchanged {
            if let digest {
                reads.append(.unchanged(digest: digest))
            } else {
                // One content per file without a digest, in order.
                reads.append(.content(contents[read]))
                read += 1
            }
        }
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
