import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// Rescans of the scenes directory: every file judged by its content, read off the engine a chunk at a time.
extension EngineCore {
    /// Rescans the whole directory, judging every file by content: nothing missed, nothing unchanged revised; then
    /// calls `done`.
    ///
    /// The files are read off the engine (``mergeFiles(_:then:)``), and the engine answers requests meanwhile. It
    /// is one step of the pipeline, so no change can write a file between the read of its content and its merge: a
    /// client or remote change queues behind the step (else its write would be merged afterwards, preloaded and
    /// older, as if the app had reverted it).
    func rescan(reason: String?, then done: @escaping () -> Void) {
        let waitingSyncs = syncBarriers.waitingCookies
        let directory = settings.scenesDirectory
        let failListing = settings.testHooks ? stateDirectory.path + "/" + EngineCore.failListingHook : nil
        offload { () -> Result<[String], SystemError> in
            if let failListing, access(failListing, F_OK) == 0 {
                return .failure(SystemError("list", directory, errno: EMFILE))
            }
            do throws(SystemError) {
                return .success(try FileSystem.list(directory))
            } catch {
                return .failure(error)
            }
        } then: { [self] listing in
            guard let names = listed(listing, reason: reason) else { return done() }
            let files = names.compactMap(SceneID.init(fileName:))
            let seen = Set(files)
            mergeFiles(files) { [self] in
                mergeFiles(store.sceneIDs.filter { !seen.contains($0) }) { [self] in
                    guard let reason else { return done() }
                    logger.notice("rescanned scenes directory", metadata: ["reason": "\(reason)"])
                    broadcastWarning(.rescanned, "rescanned the scenes directory after \(reason)", scene: nil)
                    // A waiting sync's cookie event may be among the lost ones (or, after the directory was
                    // recreated, the cookie was made before the new watch existed): it would wait forever. This
                    // rescan has merged every change made before any of them was asked for, which is all a sync
                    // promises.
                    resumePendingSyncs(waitingSyncs, then: done)
                }
            }
        }
    }

    /// The names a rescan's listing found, or `nil` when it could not list the directory (then retried).
    private func listed(_ listing: Result<[String], SystemError>, reason: String?) -> [String]? {
        switch listing {
        case .success(let names):
            if sceneFiles.listingWorked() { logger.notice("the scenes directory can be listed again; rescanning") }
            return names
        case .failure(let error):
            report.testCounters.rescanFailures += 1
            // Not dropped: retried at each housekeeping tick (``tick(heartbeat:now:)``) until it works. The syncs
            // waiting for it stay waiting until then, since a lost event may be a change made before them.
            if sceneFiles.listingFailed(reason: reason ?? "a start-up scan that could not list the directory") {
                logger.error(
                    "cannot list the scenes directory; the rescan is retried every second, and syncs wait for it",
                    metadata: ["error": "\(error)"])
            }
            return nil
        }
    }

    /// How many files one job of the blocking executor reads or writes in a bulk step (a rescan, a restore): between two
    /// jobs the engine answers requests.
    static let fileChunk = 1024

    /// Reads the files of `scenes` on the blocking executor, ``fileChunk`` at a time, and merges each in order, then
    /// calls `done`: a rescan of many files leaves the engine free for requests while it reads. A file that a writer
    /// holds open by the time it is merged is left to that writer's close (§3). Stops when the daemon drains, and
    /// when the scenes directory was removed or replaced while a chunk was read: a file missing then may only be
    /// missing from the new directory, and the `.directoryGone` that follows restores the scenes instead of deleting
    /// them.
    func mergeFiles(_ scenes: [SceneID], then done: @escaping () -> Void) {
        mergeChunks(of: scenes, from: scenes.startIndex, identity: nil, then: done)
    }

    /// ``mergeFiles(_:then:)`` from `start` on; `known` is the directory's identity when the chunks before were read.
    private func mergeChunks(
        of scenes: [SceneID], from start: Int, identity known: FileSystem.Identity?, then done: @escaping () -> Void
    ) {
        guard start < scenes.endIndex, lifecycle.permits(.mergeFileChanges) else { return done() }
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        let hold = settings.testHooks ? stateDirectory.path + "/" + EngineCore.bulkHoldHook : nil
        let chunk = Array(scenes[start..<min(scenes.endIndex, start + EngineCore.fileChunk)])
        let isFirst = start == scenes.startIndex
        offload {
            if let hold, !isFirst { EngineCore.waitWhileExists(hold) }
            let before = known ?? FileSystem.identity(of: directory)
            let contents = EngineCore.readSceneFiles(chunk, directory: directory, limit: limit)
            let after = FileSystem.identity(of: directory)
            return (contents, after != nil && after == before ? after : nil)
        } then: { [self] (contents, unchanged) in
            guard let unchanged else {
                logger.notice(
                    "the scenes directory went away during a rescan; its removal is handled next",
                    metadata: ["directory": "\(directory)"])
                return done()
            }
            reserveForMerges(chunk.count) { [self] in
                for (scene, content) in zip(chunk, contents) where !sceneFiles.isOpen(scene) {
                    mergeFile(scene, content: content)
                }
                mergeChunks(of: scenes, from: start + chunk.count, identity: unchanged, then: done)
            }
        }
    }
}
