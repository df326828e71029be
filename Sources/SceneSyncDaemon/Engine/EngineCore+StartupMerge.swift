import Logging
import NIOCore
import SceneSyncCore

extension EngineCore {
    /// Brings the restored state and the scenes directory together (§5): missing files are written back (or their
    /// scenes deleted), then every file is merged by content. `scan` is the listing and check the restore made
    /// while it decoded the snapshot, after the watch started.
    ///
    /// Reading the files is most of the cost with many scenes (the scan's check spares the unchanged ones), so it
    /// runs on every core, a chunk at a time and one chunk ahead, while the merging stays here, in directory order.
    /// Nothing else uses the engine before start-up is done, and each file is still read shortly before it is
    /// merged (a later write reaches the watcher, whose events are taken once start-up is done).
    ///
    /// `done` runs once the merge is over.
    func mergeDirectory(_ scan: StartupScan, then done: @escaping () -> Void) {
        let started = ContinuousClock.now
        let listing: StartupScan.Listing
        switch scan.listing {
        case .success(let listed):
            listing = listed
            for name in listed.removed {
                logger.notice("removed a temp file a crash left behind", metadata: ["file": "\(name)"])
            }
        case .failure(let error):
            logger.error("cannot list scenes directory", metadata: ["error": "\(error)"])
            restoreMissingFiles { [self] in
                rescan(reason: nil) { [self] in
                    publishStatus()
                    done()
                }
            }
            return
        }
        // Whether the scan's check is of the restored state is decided before anything here can change the store:
        // the index is of the snapshot just restored, before any merge.
        let unchangedDigests = listing.unchangedDigests(
            epoch: store.epoch, revision: store.revision, codec: SceneFileIndex.describe(settings.codec))
        if listing.check != nil, unchangedDigests == nil {
            logger.info("the scene files were checked against an index of another state: every file is read")
        }
        // One listing tells which snapshot scenes lack a file, instead of a stat per scene; found once, for both
        // the write-back and the merge of the scenes without a file (a pass over every scene each).
        let missing = missingScenes(
            listed: listing.files, unchangedSinceIndex: unchangedDigests?.count(where: { $0 != nil }))
        restoreMissingFiles(missing: missing) { [self] in
            let merge = StartupMerge(
                scan: scan, listing: listing, unchangedDigests: unchangedDigests, missing: missing, started: started,
                restoredMissing: .now)
            let first = readAhead(merge, from: 0)
            mergeListed(merge, from: 0, reading: first, then: done)
        }
    }

    /// The start-up merge between its steps: what it was given, and what it counted so far.
    private struct StartupMerge {
        let scan: StartupScan
        let listing: StartupScan.Listing
        let unchangedDigests: [UInt64?]?
        /// The scenes the listing did not find, sorted.
        let missing: [SceneID]
        let started: ContinuousClock.Instant
        let restoredMissing: ContinuousClock.Instant
        var unchanged = 0
        var filesMerged = ContinuousClock.now
    }

    /// Starts reading the chunk of listed files at `start`, on every core, while the one before is merged; `nil`
    /// past the last.
    private func readAhead(_ merge: StartupMerge, from start: Int) -> EventLoopFuture<[StartupRead]>? {
        let files = merge.listing.files
        guard start < files.count else { return nil }
        let end = min(files.count, start + EngineCore.fileChunk)
        let chunk = Array(files[start..<end])
        let digests =
            merge.unchangedDigests.map { Array($0[start..<end]) } ?? Array(repeating: nil, count: chunk.count)
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        let io = io
        return loop.eventLoop.makeFutureWithTask {
            await EngineCore.readChangedFiles(chunk, unchanged: digests, directory: directory, limit: limit, on: io)
        }
    }

    /// Merges the chunk of listed files at `start` once `reading` has it, then the next, in directory order.
    private func mergeListed(
        _ merge: StartupMerge, from start: Int, reading: EventLoopFuture<[StartupRead]>?,
        then done: @escaping () -> Void
    ) {
        guard let reading else { return mergeAbsent(merge, then: done) }
        reading.assumeIsolated().whenComplete { [self] read in
            guard case .success(let contents) = read else { preconditionFailure("reading files cannot fail") }
            var merge = merge
            let files = merge.listing.files
            let chunk = files[start..<min(files.count, start + EngineCore.fileChunk)]
            let next = readAhead(merge, from: chunk.endIndex)
            // Only files that changed since the snapshot are merged, and only a merge takes a revision.
            let changed = contents.count(where: { if case .content = $0 { true } else { false } })
            let mergeChunk = { [self] in
                for (scene, content) in zip(chunk, contents) {
                    switch content {
                    case .content(let content):
                        mergeFile(scene, content: content)
                    case .unchanged(let digest):
                        store.noteFileHoldsState(scene, digest: digest)
                        merge.unchanged += 1
                    }
                }
                mergeListed(merge, from: chunk.endIndex, reading: next, then: done)
            }
            guard changed > 0 else { return mergeChunk() }
            reserveForMerges(changed, then: mergeChunk)
        }
    }

    /// Merges the scenes whose file is gone (or was just written back by restoreMissingFiles, which reads as
    /// unchanged), then ends the start-up merge.
    ///
    /// They are the missing scenes the store still holds: merging the listed files only changed listed scenes, and
    /// nothing else reaches the engine during the start-up merge.
    private func mergeAbsent(_ merge: StartupMerge, then done: @escaping () -> Void) {
        var merge = merge
        merge.filesMerged = .now
        let absent = merge.missing.filter { store.scene($0) != nil }
        guard !absent.isEmpty else { return mergeDone(merge, then: done) }
        readFiles(absent) { [self] contents in
            reserveForMerges(absent.count) { [self] in
                for (scene, content) in zip(absent, contents) { mergeFile(scene, content: content) }
                mergeDone(merge, then: done)
            }
        }
    }

    private func mergeDone(_ merge: StartupMerge, then done: @escaping () -> Void) {
        report.testCounters.unchangedAtStart = merge.unchanged
        // Only after a whole merge: without the listing, the store may not hold what the files do.
        reconcileReplica()
        sceneFiles.settled(at: merge.scan.moment)
        let merged = ContinuousClock.now
        StartupMemory.returnFreedMemory()
        // The phases of the merge, with their times (the listing, the index and the check of each file were logged
        // by the restore, beside whose decode they ran): writing back missing files, reading the changed listed files
        // and merging every listed one, the scenes without a file, returning freed memory.
        logger.info(
            "merged the scenes directory",
            metadata: [
                "files": "\(merge.listing.files.count)", "unchanged_since_snapshot": "\(merge.unchanged)",
                "duration": "\(ContinuousClock.now - merge.started)",
                "restore_missing": "\(merge.restoredMissing - merge.started)",
                "listed_files": "\(merge.filesMerged - merge.restoredMissing)",
                "absent": "\(merged - merge.filesMerged)", "trim": "\(ContinuousClock.now - merged)",
            ])
        publishStatus()
        done()
    }

    /// Reads scene files on every thread of the blocking executor; the results are in the order of `scenes`.
    static func readFiles(
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
    static func readChangedFiles(
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

    private static func readFile(_ path: String, limit: Int) -> Result<[UInt8]?, SystemError> {
        do throws(SystemError) {
            return .success(try FileSystem.read(path, limit: limit))
        } catch {
            return .failure(error)
        }
    }
}
