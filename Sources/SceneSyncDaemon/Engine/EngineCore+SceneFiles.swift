import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The scenes directory as the engine sees it: merging what apps wrote, rescanning after an overflow, the sync
/// markers, a directory that vanished, and the files restored at start.
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

    /// The test hook that makes every listing of the scenes directory by a rescan fail with EMFILE while this file
    /// exists in the state directory: running out of descriptors cannot be caused from outside without harm.
    static let failListingHook = ".scenesync-test-fail-listing"

    /// The test hook (`SCENESYNC_TEST_HOOKS=1`) that holds a bulk step after its first chunk for as long as this
    /// file exists in the state directory: a test then finds the engine answering in the middle of the step,
    /// however slow or fast the machine, instead of racing a step of a fraction of a second.
    static let bulkHoldHook = ".scenesync-test-hold-bulk"

    /// The test hooks of a stuck engine: this marker in the scenes directory blocks the engine while
    /// ``engineHoldHook`` exists in the state directory.
    static let blockEngineHook = ".scenesync-test-block-engine"
    static let engineHoldHook = ".scenesync-test-hold-engine"

    /// Blocks the calling thread while `path` exists; test hooks only.
    static func waitWhileExists(_ path: String) {
        while access(path, F_OK) == 0 { usleep(1000) }
    }

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

    /// Answers the `sync`s waiting on `cookies` and removes their cookies, then calls `done`. A bulk step that reads
    /// files off the engine answers only those asked for before it began: one asked for meanwhile may follow an
    /// app's write that the step had already read past, whose event is merged after the step.
    func resumePendingSyncs(_ cookies: Set<String>, then done: @escaping () -> Void) {
        let answered = syncBarriers.answer(cookies)
        removeMarkers(answered.map { EngineCore.syncCookiePrefix + $0.cookie }) { [self] in
            answerSyncs(answered.flatMap(\.waiters))
            done()
        }
    }

    /// Answers `sync` waiters with the clock as it is now, each after the step that answers them.
    func answerSyncs(_ waiters: [(Clock) -> Void]) {
        let clock = store.clock
        for waiter in waiters { later { waiter(clock) } }
    }

    /// Takes one batch from the watcher, in kernel order: which files are open for writing is known at once, and
    /// the changes are merged by the pipeline (see ``runPipelineSteps(watcherJustDrained:)``), after the step in
    /// flight. `watcherJustDrained` when `events` are what the watcher's descriptor held a moment ago.
    func take(_ events: [SceneDirectoryEvent], watcherJustDrained: Bool) {
        let start = ContinuousClock.now
        defer { metrics.timeTurn(since: start) }
        // Once draining, the final snapshot holds the last revision anyone was told of: a change now is merged at
        // the next start, above it (§4).
        guard lifecycle.permits(.mergeFileChanges) else { return }
        // Which files are open changes before the merges are queued: a waiting change then queues behind them.
        for event in events {
            for waiter in sceneFiles.take(event) { later(waiter) }
        }
        run(pipeline.enqueue(events: events), watcherJustDrained: watcherJustDrained)
    }

    /// Acts on a marker file the watcher reported (a `sync` cookie, a test hook), then calls `done`.
    func handleMarker(_ name: String, then done: @escaping () -> Void) {
        if name.hasPrefix(EngineCore.syncCookiePrefix) {
            // While a rescan is owed, events before this cookie may have been lost with the overflow: its syncs
            // wait for the rescan, which answers every sync waiting when it begins. (Found by the simulation.)
            guard sceneFiles.rescanOwed == nil else { return removeMarkers([name], then: done) }
            let cookie = String(name.dropFirst(EngineCore.syncCookiePrefix.count))
            let waiters = syncBarriers.arrived(cookie)
            removeMarkers([name]) { [self] in
                answerSyncs(waiters)
                done()
            }
        } else if settings.testHooks, name == ".scenesync-test-overflow" {
            removeMarkers([name]) { [self] in rescan(reason: "an inotify queue overflow", then: done) }
        } else if settings.testHooks, name == EngineCore.blockEngineHook {
            // A stuck engine, on purpose: the engine's thread itself blocks while the hold file exists, as a
            // deadlock or a runaway loop would, so that a test sees the watchdog pings stop. The one blocking call
            // on the engine's thread, and the point of this hook.
            removeMarkers([name]) { [self] in
                EngineCore.waitWhileExists(stateDirectory.path + "/" + EngineCore.engineHoldHook)
                done()
            }
        } else {
            done()
        }
    }

    /// Removes marker files from the scenes directory, then calls `done`, before their barriers are answered:
    /// whoever waited finds the directory as the apps left it. The watcher ignores their removal; one already gone
    /// (the directory went away) is no error.
    func removeMarkers(_ names: [String], then done: @escaping () -> Void) {
        guard !names.isEmpty else { return done() }
        let paths = names.map { settings.scenesDirectory + "/" + $0 }
        offload({ for path in paths { _ = unlink(path) } }, then: { _ in done() })
    }

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
    /// is off (§5), then calls `done`. `present` is the scene files a directory listing just found; without one,
    /// each file is checked. The checks and writes run on the blocking executor: a removed directory of many scenes
    /// does not hold the engine.
    func restoreMissingFiles(present: Set<SceneID>? = nil, then done: @escaping () -> Void) {
        let directory = settings.scenesDirectory
        // A reload while the step waits changes no decision it made.
        let restore = settings.restoreMissing
        if let present {
            let missing = store.sceneIDs.filter { !present.contains($0) }.sorted()
            return restoreMissing(missing, restore: restore, directory: directory, then: done)
        }
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

    /// A temp name in the scenes directory that the watcher ignores (a dot-file, not ending in `.json`):
    /// `.<ID>.json.<pid>.tmp`. The pattern is reserved for the daemon (docs/protocol.md): such files are removed at start.
    static func tempName(_ scene: SceneID) -> String { ".\(scene.rawValue).json.\(ownPID).tmp" }

    /// Read once: every scene-file write names its temp file with it.
    static let ownPID = getpid()

    /// Whether `name` has the shape of ``tempName(_:)``: a dot, a scene ID, `.json.`, a pid, `.tmp`.
    ///
    /// On the name's bytes: the watcher asks this of several events of every change the daemon writes.
    static func isOwnTempName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let suffix = Array(".tmp".utf8)
        let json = Array(".json.".utf8)
        guard bytes.first == UInt8(ascii: "."), bytes.count > 1 + suffix.count,
            bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return false }
        let inner = bytes[1..<(bytes.count - suffix.count)]
        // The pid: the digits at the end of `inner`, after the last `.json.`.
        var end = inner.endIndex
        while end > inner.startIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(inner[end - 1]) { end -= 1 }
        guard end < inner.endIndex, end - inner.startIndex >= json.count,
            inner[(end - json.count)..<end].elementsEqual(json)
        else { return false }
        let id = inner[inner.startIndex..<(end - json.count)]
        return SceneID(fileName: String(decoding: id, as: UTF8.self) + ".json") != nil
    }

    static let syncCookiePrefix = ".scenesync-sync-"
}
