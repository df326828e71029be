import SceneSyncCore

extension SceneEngine {
    /// A client's change, as it waits for its group commit.
    struct ChangeRequest {
        let id: [UInt8]
        let operation: SceneStore.Operation
        let scene: SceneID
        let ifVersion: UInt64?
        let origin: Origin
        /// The scene's `modified` revision when the request arrived: an app's write merged after that is overwritten
        /// by this change and kept in its conflict record (§3).
        let seenModified: UInt64?
    }

    /// Consecutive changes of one connection: answered together, in order, once committed.
    struct ChangeGroup {
        let requests: [ChangeRequest]
        let outbox: Outbox
        let done: CheckedContinuation<Void, Never>
    }

    /// The disk work of the engine, one step at a time (``PipelineMachine`` says which): file events (read off the
    /// engine, merged here), other hosts' batches and group commits (planned here, written off the engine,
    /// committed here), while the engine itself stays free to serve reads, subscriptions and fan-out.
    func run(_ start: Pipeline.Start) {
        guard start == .start else { return }
        tasks.spawn { await self.runPipeline() }
    }

    private func runPipeline() async {
        while true {
            drainWatcher()
            switch pipeline.next() {
            case .perform(.mergeFiles(let events)):
                await process(events)
            case .perform(.applyRemote(let remote)):
                remote.done.resume(returning: await performRemote(remote.changes))
            case .perform(.commit(let groups)):
                await commit(groups)
            case .idle(let waiters):
                for waiter in waiters { waiter.resume() }
                publishStatus()
                return
            }
        }
    }

    /// Waits until every file event taken and every change queued so far is done.
    public func settle() async {
        await withCheckedContinuation { continuation in
            if pipeline.settle(continuation) { continuation.resume() }
        }
    }

    /// Queues a group and waits until it is answered.
    func submit(_ requests: [ChangeRequest], outbox: Outbox) async {
        guard !requests.isEmpty else { return }
        await withCheckedContinuation { continuation in
            run(pipeline.enqueue(group: ChangeGroup(requests: requests, outbox: outbox, done: continuation)))
        }
    }

    // MARK: - File events

    /// Merges a batch of file events in order. The files the events name are read together, off the engine, just
    /// before they are merged; the events that act on the whole directory (a rescan, a marker, the directory gone)
    /// split the batch, so no file is merged from content read before them.
    private func process(_ events: [SceneDirectoryEvent]) async {
        var start = events.startIndex
        while start < events.endIndex {
            guard lifecycle.permits(.mergeFileChanges) else { return }
            var end = start
            var scenes: [SceneID] = []
            var listed = Set<SceneID>()
            while end < events.endIndex {
                switch events[end] {
                case .changed(let scene), .removed(let scene):
                    if listed.insert(scene).inserted { scenes.append(scene) }
                case .modified:
                    break
                case .overflow, .marker, .directoryGone:
                    break
                }
                if case .overflow = events[end] { break }
                if case .marker = events[end] { break }
                if case .directoryGone = events[end] { break }
                end += 1
            }
            if !scenes.isEmpty {
                let contents = await readFiles(scenes)
                await reserveForMerges(scenes.count)
                guard lifecycle.permits(.mergeFileChanges) else { return }
                for (scene, content) in zip(scenes, contents) { mergeFile(scene, content: content) }
            }
            guard end < events.endIndex else { return }
            switch events[end] {
            case .overflow:
                await rescan(reason: sceneFiles.rescanOwed ?? "an inotify queue overflow")
            case .marker(let name):
                await handleMarker(name)
            case .directoryGone:
                await directoryGone()
            case .changed, .removed, .modified:
                break
            }
            start = end + 1
        }
    }

    /// The scene files as they are now, in the order of `scenes` (a few on the engine's thread, more on the
    /// blocking executor: ``fileStep(files:bytes:_:)``).
    func readFiles(_ scenes: [SceneID]) async -> [Result<[UInt8]?, SystemError>] {
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        return await fileStep(files: scenes.count) {
            SceneEngine.readSceneFiles(scenes, directory: directory, limit: limit)
        }
    }

    /// Reads the scene files, blocking.
    nonisolated static func readSceneFiles(
        _ scenes: [SceneID], directory: String, limit: Int
    ) -> [Result<[UInt8]?, SystemError>] {
        scenes.map { scene in
            do throws(SystemError) {
                return .success(try FileSystem.read(directory + "/" + scene.fileName, limit: limit))
            } catch {
                return .failure(error)
            }
        }
    }

    // MARK: - Group commit

    /// Plans every change of the groups in memory (``GroupCommit``), writes each scene they touch once (its final
    /// content) off the engine, then commits, broadcasts and answers them all in revision order. A scene whose write
    /// failed has all its changes refused with `unavailable` and nothing changed; the other scenes are not affected.
    private func commit(_ groups: [ChangeGroup]) async {
        report.testCounters.groupCommits += 1
        guard lifecycle.permits(.acceptClientChanges) else {
            answerAll(groups, SceneSyncError(.unavailable, "the daemon is shutting down"))
            return
        }
        await mergeUnknownFiles(of: groups)
        // Merging suspended the engine: the daemon may have begun to shut down meanwhile.
        guard lifecycle.permits(.acceptClientChanges) else {
            answerAll(groups, SceneSyncError(.unavailable, "the daemon is shutting down"))
            return
        }

        var planned = GroupCommit(
            planning: groups.map(\.requests), on: store, openWriters: sceneFiles.openWriters, stillOpen: stillOpenError)
        if planned.revisionsNeeded > 0 {
            do throws(SceneSyncError) {
                try await reserveRevisions(planned.revisionsNeeded)
            } catch {
                answerAll(groups, error)
                return
            }
            // An app may have opened one of these files for writing while the engine waited: such a file is never
            // replaced (§3). Only the pipeline changes the store, so planning again on the writers open now needs
            // no more revisions than were just reserved.
            let writersBefore = sceneFiles.openWriters
            drainWatcher()
            if sceneFiles.openWriters != writersBefore {
                planned = GroupCommit(
                    planning: groups.map(\.requests), on: store, openWriters: sceneFiles.openWriters,
                    stillOpen: stillOpenError)
            }
        }

        let (failures, displaced) = await writeSceneFiles(planned.files)
        for (scene, error) in failures {
            logger.warning("cannot write scene file", metadata: ["file": "\(filePath(scene))", "error": "\(error)"])
        }

        // An app's write that landed after the plan and before the rename displaced it happened first (§3): it is
        // merged as the file change it is, with its own revision, and the batch's changes then overwrite it, with
        // it in their conflict record. The file keeps the daemon's content, which the batch's answers describe.
        // Taking the app's write back into the file and planning again instead would need a second write, which
        // an app could race again; this way every step stays one write per scene.
        var merged: [SceneID: ChangeRecord] = [:]
        for (scene, content) in displaced where !isKnownFileContent(content, of: scene) {
            if let record = mergeDisplaced(scene, content) { merged[scene] = record }
        }
        sceneFiles.replaced(displaced.map(\.0))
        planned.rebase(on: store, after: merged)

        // The files are written: these changes are made, whatever the lifecycle says now (§4: the final snapshot
        // waits for them, see `shutdown()`).
        let (records, revisions) = planned.commit(into: &store, failed: Set(failures.keys))
        var replicated = false
        for record in records {
            guard let record else { continue }
            metrics.changes.client.increment()
            replicated = broadcast(record) || replicated
        }
        // A change to a shared scene is answered once its journal line is in the file (one turn of the journal's
        // writer), with the lines recorded before it: a crash after the answer then finds the change whatever it
        // follows. Answered at once, a `SIGKILL` in that turn could take both the line of a remote change applied
        // just before (which the feed then applies again, over the file) and this change's, and the answered change
        // would be lost (§9). Its events are out already: a subscriber sees what a crash may still take, as it sees
        // an app's file change before its line is written.
        if replicated { await attachments.replicator?.persistRecords() }
        for (group, answers) in zip(groups, planned.outcomes) {
            for (request, outcome) in zip(group.requests, answers) {
                group.outbox.enqueue(
                    line: answer(request, outcome, batch: planned.batch, revisions: revisions, failures: failures))
            }
            group.done.resume()
        }
    }

    private func answer(
        _ request: ChangeRequest, _ outcome: GroupCommit.Outcome, batch: SceneStore.ChangeBatch, revisions: [UInt64],
        failures: [SceneID: SystemError]
    ) -> [UInt8] {
        switch outcome {
        case .refused(let error):
            return ResponseWriter.error(id: request.id, error)
        case .planned(let index):
            if let failure = failures[request.scene] {
                return ResponseWriter.error(
                    id: request.id, SceneSyncError(.unavailable, "cannot write \(request.scene.fileName): \(failure)"))
            }
            let plan = batch.plans[index]
            var response = ResponseWriter(id: request.id)
            if case .delete = request.operation {
                response.append("revision", uint: revisions[index])
            } else {
                response.append("scene", string: request.scene.rawValue)
                response.append("version", uint: plan.state?.version ?? 0)
                response.append("revision", uint: revisions[index])
            }
            return response.finish()
        }
    }

    private func answerAll(_ groups: [ChangeGroup], _ error: SceneSyncError) {
        for group in groups {
            for request in group.requests { group.outbox.enqueue(line: ResponseWriter.error(id: request.id, error)) }
            group.done.resume()
        }
    }

    /// Before a file is replaced, any change in it the daemon has not read is merged (§3). The watcher reports
    /// every finished write, so only a file whose content the store does not know (a scene restored from a snapshot
    /// whose file could not be read, a merge that waits for the state directory) is read here first. A write that
    /// lands after this, before the rename, is what the exchange-rename hands back (see ``commit(_:)``).
    private func mergeUnknownFiles(of groups: [ChangeGroup]) async {
        var unknown: [SceneID] = []
        var listed = Set<SceneID>()
        for group in groups {
            for request in group.requests where listed.insert(request.scene).inserted {
                let scene = request.scene
                if sceneFiles.mustRead(scene, in: store) {
                    unknown.append(scene)
                }
            }
        }
        guard !unknown.isEmpty else { return }
        let contents = await readFiles(unknown)
        await reserveForMerges(unknown.count)
        for (scene, content) in zip(unknown, contents) {
            // A file that cannot be read here fails the write too; only a readable one can hold an unread change.
            guard case .success(let bytes) = content else { continue }
            if bytes.map(SceneStore.digest) != store.fileDigest(scene), bytes != nil || store.scene(scene) != nil {
                mergeFile(scene, content: content)
            }
        }
    }

    func stillOpenError(_ scene: SceneID) -> SceneSyncError {
        SceneSyncError(
            .unavailable,
            "\(scene.fileName) is still open for writing by another process after scenes.write_wait_ms ("
                + "\(Int(settings.writeWait / .milliseconds(1))) ms); try again once it is closed")
    }
}
