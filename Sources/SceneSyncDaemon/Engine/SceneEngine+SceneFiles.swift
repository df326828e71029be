import Logging
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The scenes directory as the engine sees it: merging what apps wrote, rescanning after an overflow, the sync
/// markers, a directory that vanished, and the files restored at start.
extension SceneEngine {
    func filePath(_ scene: SceneID) -> String { settings.scenesDirectory + "/" + scene.fileName }

    /// Merges a scene file's content, as the blocking executor just read it (``readFiles(_:)``). Reading at
    /// handling time is what makes rapid rewrites coalesce and the daemon's own write-backs silent. The step that
    /// calls this has reserved its revisions (``reserveRevisions(_:)``).
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

    /// Rescans the whole directory, judging every file by content: nothing missed, nothing unchanged revised.
    ///
    /// The files are read off the engine (``mergeFiles(_:)``), and the engine answers requests meanwhile. It is one
    /// step of the pipeline, so no change can write a file between the read of its content and its merge: a client
    /// or remote change queues behind the step (else its write would be merged afterwards, preloaded and older, as if
    /// the app had reverted it).
    func rescan(reason: String?) async {
        let waitingSyncs = syncBarriers.waitingCookies
        let directory = settings.scenesDirectory
        let failListing = settings.testHooks ? stateDirectory.path + "/" + SceneEngine.failListingHook : nil
        let listing = await io.run { () -> Result<[String], SystemError> in
            if let failListing, access(failListing, F_OK) == 0 {
                return .failure(SystemError("list", directory, errno: EMFILE))
            }
            do throws(SystemError) {
                return .success(try FileSystem.list(directory))
            } catch {
                return .failure(error)
            }
        }
        let names: [String]
        switch listing {
        case .success(let listed):
            names = listed
            if sceneFiles.listingWorked() { logger.notice("the scenes directory can be listed again; rescanning") }
        case .failure(let error):
            report.testCounters.rescanFailures += 1
            // Not dropped: retried at each housekeeping tick (``tick(heartbeat:)``) until it works. The syncs
            // waiting for it stay waiting until then, since a lost event may be a change made before them.
            if sceneFiles.listingFailed(reason: reason ?? "a start-up scan that could not list the directory") {
                logger.error(
                    "cannot list the scenes directory; the rescan is retried every second, and syncs wait for it",
                    metadata: ["error": "\(error)"])
            }
            return
        }
        let files = names.compactMap(SceneID.init(fileName:))
        let seen = Set(files)
        await mergeFiles(files)
        await mergeFiles(store.sceneIDs.filter { !seen.contains($0) })
        if let reason {
            logger.notice("rescanned scenes directory", metadata: ["reason": "\(reason)"])
            broadcastWarning(.rescanned, "rescanned the scenes directory after \(reason)", scene: nil)
            // A waiting sync's cookie event may be among the lost ones (or, after the directory was recreated, the
            // cookie was made before the new watch existed): it would wait forever. This rescan has merged every
            // change made before any of them was asked for, which is all a sync promises.
            await resumePendingSyncs(waitingSyncs)
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

    /// Reads the files of `scenes` on the blocking executor, ``fileChunk`` at a time, and merges each in order: a rescan of
    /// many files leaves the engine free for requests while it reads. A file that a writer holds open by the time it
    /// is merged is left to that writer's close (§3). Stops when the daemon drains, and when the scenes directory
    /// was removed or replaced while a chunk was read: a file missing then may only be missing from the new
    /// directory, and the `.directoryGone` that follows restores the scenes instead of deleting them.
    func mergeFiles(_ scenes: [SceneID]) async {
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        let hold = settings.testHooks ? stateDirectory.path + "/" + SceneEngine.bulkHoldHook : nil
        var identity: FileSystem.Identity? = nil
        var start = scenes.startIndex
        while start < scenes.endIndex {
            guard lifecycle.permits(.mergeFileChanges) else { return }
            let chunk = Array(scenes[start..<min(scenes.endIndex, start + SceneEngine.fileChunk)])
            let isFirst = start == scenes.startIndex
            start += chunk.count
            let known = identity
            let (contents, unchanged) = await io.run {
                if let hold, !isFirst { SceneEngine.waitWhileExists(hold) }
                let before = known ?? FileSystem.identity(of: directory)
                let contents = SceneEngine.readSceneFiles(chunk, directory: directory, limit: limit)
                let after = FileSystem.identity(of: directory)
                return (contents, after != nil && after == before ? after : nil)
            }
            guard let unchanged else {
                logger.notice(
                    "the scenes directory went away during a rescan; its removal is handled next",
                    metadata: ["directory": "\(directory)"])
                return
            }
            identity = unchanged
            await reserveForMerges(chunk.count)
            for (scene, content) in zip(chunk, contents) where !sceneFiles.isOpen(scene) {
                mergeFile(scene, content: content)
            }
        }
    }

    /// Answers the `sync`s waiting on `cookies` and removes their cookies. A bulk step that reads files off the
    /// engine answers only those asked for before it began: one asked for meanwhile may follow an app's write that
    /// the step had already read past, whose event is merged after the step.
    func resumePendingSyncs(_ cookies: Set<String>) async {
        let answered = syncBarriers.answer(cookies)
        await removeMarkers(answered.map { SceneEngine.syncCookiePrefix + $0.cookie })
        for waiter in answered.flatMap(\.waiters) { waiter.succeed(store.clock) }
    }

    /// Takes one batch from the watcher, in kernel order: which files are open for writing is known at once, and
    /// the changes are merged by the pipeline (see ``runPipelineSteps()``), after the step in flight.
    public func handle(_ events: [SceneDirectoryEvent]) {
        handle(events, watcherJustDrained: false)
    }

    /// ``handle(_:)``; `watcherJustDrained` when `events` are what the watcher's descriptor held a moment ago.
    func handle(_ events: [SceneDirectoryEvent], watcherJustDrained: Bool) {
        let start = ContinuousClock.now
        defer { metrics.timeTurn(since: start) }
        // Once draining, the final snapshot holds the last revision anyone was told of: a change now is merged at
        // the next start, above it (§4).
        guard lifecycle.permits(.mergeFileChanges) else { return }
        // Which files are open changes before the merges are queued: a waiting change then queues behind them.
        for event in events {
            for waiter in sceneFiles.take(event) { waiter.succeed() }
        }
        run(pipeline.enqueue(events: events), watcherJustDrained: watcherJustDrained)
    }

    func handleMarker(_ name: String) async {
        if name.hasPrefix(SceneEngine.syncCookiePrefix) {
            // While a rescan is owed, events before this cookie may have been lost with the overflow: its syncs
            // wait for the rescan, which answers every sync waiting when it begins. (Found by the simulation.)
            guard sceneFiles.rescanOwed == nil else {
                await removeMarkers([name])
                return
            }
            let cookie = String(name.dropFirst(SceneEngine.syncCookiePrefix.count))
            let waiters = syncBarriers.arrived(cookie)
            await removeMarkers([name])
            for waiter in waiters { waiter.succeed(store.clock) }
        } else if settings.testHooks, name == ".scenesync-test-overflow" {
            await removeMarkers([name])
            await rescan(reason: "an inotify queue overflow")
        } else if settings.testHooks, name == SceneEngine.blockEngineHook {
            // A stuck engine, on purpose: the actor itself blocks while the hold file exists, as a deadlock or a
            // runaway loop would, so that a test sees the watchdog pings stop. The one blocking call on the
            // engine's executor, and the point of this hook.
            await removeMarkers([name])
            SceneEngine.waitWhileExists(stateDirectory.path + "/" + SceneEngine.engineHoldHook)
        }
    }

    /// Removes marker files from the scenes directory, before their barriers are answered: whoever waited finds
    /// the directory as the apps left it. The watcher ignores their removal; one already gone (the directory went
    /// away) is no error.
    func removeMarkers(_ names: [String]) async {
        guard !names.isEmpty else { return }
        let paths = names.map { settings.scenesDirectory + "/" + $0 }
        await io.run { for path in paths { _ = unlink(path) } }
    }

    /// The scenes directory itself vanished. Recreate it and put every scene file back (or forget the scenes when
    /// `restore_missing` is off), so apps keep finding their state. The caller restarts the watcher.
    func directoryGone() async {
        let waitingSyncs = syncBarriers.waitingCookies
        for waiter in sceneFiles.closeAll() { waiter.succeed() }
        logger.error(
            "scenes directory disappeared; recreating it", metadata: ["directory": "\(settings.scenesDirectory)"])
        let directory = settings.scenesDirectory
        let made = await io.run { () -> SystemError? in
            do throws(SystemError) {
                try FileSystem.makeDirectory(directory, mode: 0o755)
                return nil
            } catch {
                return error
            }
        }
        if let made { logger.error("cannot recreate scenes directory", metadata: ["error": "\(made)"]) }
        broadcastWarning(.rescanned, "the scenes directory was removed and has been recreated", scene: nil)
        await restoreMissingFiles()
        // Sync barriers waiting on a cookie in the old directory would never complete. Those asked for since wait
        // for the rescan that follows the new watch.
        await resumePendingSyncs(waitingSyncs)
    }

    /// Writes back the file of every scene whose file is missing, or deletes those scenes when `restore_missing`
    /// is off (§5). `present` is the scene files a directory listing just found; without one, each file is checked.
    /// The checks and writes run on the blocking executor: a removed directory of many scenes does not hold the engine.
    func restoreMissingFiles(present: Set<SceneID>? = nil) async {
        let directory = settings.scenesDirectory
        // A reload during the step's awaits changes no decision it made.
        let restore = settings.restoreMissing
        let missing: [SceneID]
        if let present {
            missing = store.sceneIDs.filter { !present.contains($0) }.sorted()
        } else {
            let known = Array(store.sceneIDs)
            missing = await io.run {
                known.filter { id in
                    var exists = stat()
                    return stat(directory + "/" + id.fileName, &exists) != 0 && errno == ENOENT
                }
            }.sorted()
        }
        guard !missing.isEmpty else { return }
        guard restore else { return await mergeFiles(missing) }
        // A shared scene the journal last saw this host hold deleted was deleted after the restored snapshot (by
        // this host, or by another whose deletion it applied): its missing file is that deletion, merged as such.
        // Written back, the snapshot's content would differ from the cluster's state and be pushed, undoing the
        // deletion on every host.
        let heldDeleted = attachments.replicator?.scenesHeldDeleted() ?? []
        let deleted = missing.filter(heldDeleted.contains)
        if !deleted.isEmpty {
            logger.notice(
                "shared scenes deleted since the last snapshot stay deleted",
                metadata: ["scenes": "\(deleted.map(\.rawValue).joined(separator: ", "))"])
            await mergeFiles(deleted)
        }
        let restored = missing.filter { !heldDeleted.contains($0) }
        var createdMeanwhile: [SceneID] = []
        var start = restored.startIndex
        while start < restored.endIndex {
            guard lifecycle.permits(.mergeFileChanges) else { return }
            // Only one chunk's bytes are copied out of the store at a time.
            let chunk = restored[start..<min(restored.endIndex, start + SceneEngine.fileChunk)]
            start = chunk.endIndex
            let files = chunk.compactMap { id in store.scene(id).map { (id: id, bytes: $0.fileBytes) } }
            let outcomes = await io.run {
                files.map { file -> Result<Bool, SystemError> in
                    do throws(SystemError) {
                        return .success(
                            try FileSystem.createExclusively(
                                file.bytes, at: directory + "/" + file.id.fileName,
                                tempName: SceneEngine.tempName(file.id)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            for (file, outcome) in zip(files, outcomes) {
                switch outcome {
                case .success(true):
                    store.noteFileWritten(file.id, bytes: file.bytes)
                case .success(false):
                    // An app created the file since it was found missing: that is a change, never overwritten.
                    createdMeanwhile.append(file.id)
                case .failure(let error):
                    let path = filePath(file.id)
                    logger.warning("cannot restore scene file", metadata: ["file": "\(path)", "error": "\(error)"])
                    broadcastWarning(.writeFailed, "cannot restore \(file.id.fileName): \(error)", scene: file.id)
                }
            }
        }
        await mergeFiles(createdMeanwhile)
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
