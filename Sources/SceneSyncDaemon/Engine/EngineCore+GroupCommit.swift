import SceneSyncCore

extension EngineCore {
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
        /// Runs once its answers are queued.
        let done: () -> Void
    }

    typealias Commit = CommitRun<ChangeGroup>

    /// Starts a group commit (``CommitRun``): plans every change of the groups in memory, writes each scene they
    /// touch once (its final content), then commits, broadcasts and answers them all in revision order. A scene
    /// whose write failed has all its changes refused with `unavailable` and nothing changed; the other scenes are
    /// not affected.
    ///
    /// - Returns: whether it is over already; otherwise an action is under way off the engine's thread, and its
    ///   completion goes on with the run and then with the pipeline.
    func startCommit(_ groups: [ChangeGroup]) -> Bool {
        report.testCounters.groupCommits += 1
        let wait = settings.writeWait
        var run = Commit(groups: groups, requests: groups.map(\.requests)) {
            EngineCore.stillOpenError($0, writeWait: wait)
        }
        let action = run.start(
            accepting: lifecycle.permits(.acceptClientChanges), unknown: unknownFiles(of: run.scenes),
            openWriters: sceneFiles.openWriters, store: store)
        commitRun = run
        return performCommit(action)
    }

    /// Performs the run's actions on the engine's thread for as long as they are small, then either answers
    /// (`true`) or hands the one that may block off the thread, whose completion resumes the run (`false`).
    /// `resumed`: the run waited for such a completion before `first`.
    private func performCommit(_ first: Commit.Action, resumed: Bool = false) -> Bool {
        var action = first
        while true {
            let done: Commit.Report
            switch action {
            case .readUnknownFiles(let scenes):
                guard isInline(files: scenes.count) else {
                    let read = sceneFileReader
                    offload({ read(scenes) }, reporting: { .commitFilesRead($0) })
                    return false
                }
                done = .filesRead(readFilesNow(scenes))
            case .mergeUnknownFiles(let files, let count):
                guard reserveAhead(count) else {
                    reserveForMerges(count) { [self] in resumeCommit(mergeUnknownFiles(files)) }
                    return false
                }
                done = mergeUnknownFiles(files)
            case .reserve(let count):
                guard reserveAhead(count) else {
                    reserveThenLook(count) { [self] in resumeCommit($0) }
                    return false
                }
                // Reserved ahead in a run that never waited: the pipeline took the watcher's events for this step a
                // moment ago, on this thread.
                done = resumed ? lookAfterReserving() : .reserved(nil, openWriters: sceneFiles.openWriters)
            case .write(let files):
                guard isInline(files: files.count, bytes: EngineCore.byteCount(of: files)) else {
                    let write = sceneFileWriter
                    offload({ write(files) }, reporting: { .commitFilesWritten($0) })
                    return false
                }
                done = written(writeSceneFilesNow(files))
                // The watcher's events of these writes (the daemon's own renames, which it drops) are in the kernel's
                // queue now: taken in this turn, the loop does not go round once more just to read them.
                drainWatcher()
            case .mergeDisplaced(let displaced):
                var merged: [SceneID: ChangeRecord] = [:]
                for (scene, content) in displaced where !isKnownFileContent(content, of: scene) {
                    if let record = mergeDisplaced(scene, content) { merged[scene] = record }
                }
                sceneFiles.replaced(displaced.map(\.scene))
                done = .displacedMerged(merged)
            case .publish(let records):
                var replicated = false
                for record in records {
                    metrics.changes.client.increment()
                    replicated = broadcast(record) || replicated
                }
                done = .published(replicated: replicated)
            case .persistJournal:
                guard let replicator = attachments.replicator else {
                    done = .persisted
                    break
                }
                awaitOutside({ await replicator.persistRecords() }, reporting: { _ in .journalPersisted(.groupCommit) })
                return false
            case .answer(let answers):
                commitRun = nil
                send(answers)
                return true
            case .refuse(let groups, let error):
                commitRun = nil
                answerAll(groups, error)
                return true
            }
            action = advanceCommit(done)
        }
    }

    private func advanceCommit(_ report: Commit.Report) -> Commit.Action {
        // Moved out of the property while it changes, so the value is neither copied nor released.
        guard var run = commitRun.take() else {
            preconditionFailure("a group commit step finished while none was running")
        }
        let action = run.advance(report, store: &store)
        commitRun = run
        return action
    }

    /// An action that ran off the engine's thread is done: the run goes on, then the pipeline once it is over.
    func resumeCommit(_ report: Commit.Report) {
        if performCommit(advanceCommit(report), resumed: true) { runPipelineSteps() }
    }

    private func reserveThenLook(_ count: Int, then done: @escaping (Commit.Report) -> Void) {
        reserveRevisions(count) { [self] failure in
            if let failure { return done(.reserved(failure, openWriters: sceneFiles.openWriters)) }
            done(lookAfterReserving())
        }
    }

    /// The revisions are reserved: the watcher's events are taken before any file is written, since an app may
    /// have opened one of them for writing meanwhile.
    private func lookAfterReserving() -> Commit.Report {
        drainWatcher()
        return .reserved(nil, openWriters: sceneFiles.openWriters)
    }

    private func mergeUnknownFiles(_ files: [(scene: SceneID, content: Result<[UInt8]?, SystemError>)]) -> Commit.Report
    {
        for (scene, content) in files {
            // A file that cannot be read here fails the write too; only a readable one can hold an unread change.
            guard case .success(let bytes) = content else { continue }
            if bytes.map(SceneStore.digest) != store.fileDigest(scene), bytes != nil || store.scene(scene) != nil {
                mergeFile(scene, content: content)
            }
        }
        return .unknownMerged(
            accepting: lifecycle.permits(.acceptClientChanges), openWriters: sceneFiles.openWriters)
    }

    /// The group commit's files are written (``EngineInput/commitFilesWritten(_:)``, or in this turn): what failed
    /// is logged, and the run goes on with the report.
    func written(
        _ result: (failures: [SceneID: SystemError], displaced: [(scene: SceneID, content: FileSystem.Displaced)])
    ) -> Commit.Report {
        for (scene, error) in result.failures {
            logger.warning("cannot write scene file", metadata: ["file": "\(filePath(scene))", "error": "\(error)"])
        }
        return .written(failures: result.failures, displaced: result.displaced)
    }

    /// Before a file is replaced, any change in it the daemon has not read is merged (§3). The watcher reports
    /// every finished write, so only a file whose content the store does not know (a scene restored from a snapshot
    /// whose file could not be read, a merge that waits for the state directory) is read first. A write that lands
    /// after this, before the rename, is what the exchange-rename hands back (``CommitRun/Action/mergeDisplaced(_:)``).
    private func unknownFiles(of scenes: [SceneID]) -> [SceneID] {
        scenes.filter { sceneFiles.mustRead($0, in: store) }
    }

    // MARK: - Answers

    private func send(_ answers: Commit.Answers) {
        for (group, (requests, outcomes)) in zip(answers.groups, zip(answers.requests, answers.outcomes)) {
            for (request, outcome) in zip(requests, outcomes) {
                group.outbox.enqueue(line: answer(request, outcome, answers))
            }
            group.done()
        }
    }

    private func answer(_ request: ChangeRequest, _ outcome: GroupCommit.Outcome, _ answers: Commit.Answers) -> [UInt8]
    {
        switch outcome {
        case .refused(let error):
            return ResponseWriter.error(id: request.id, error)
        case .planned(let index):
            if let failure = answers.failures[request.scene] {
                return ResponseWriter.error(id: request.id, GroupCommit.writeFailure(request.scene, failure))
            }
            let plan = answers.batch.plans[index]
            var response = ResponseWriter(id: request.id)
            if case .delete = request.operation {
                response.append("revision", uint: answers.revisions[index])
            } else {
                response.append("scene", string: request.scene.rawValue)
                response.append("version", uint: plan.state?.version ?? 0)
                response.append("revision", uint: answers.revisions[index])
            }
            return response.finish()
        }
    }

    private func answerAll(_ groups: [ChangeGroup], _ error: SceneSyncError) {
        for group in groups {
            for request in group.requests { group.outbox.enqueue(line: ResponseWriter.error(id: request.id, error)) }
            group.done()
        }
    }

    func stillOpenError(_ scene: SceneID) -> SceneSyncError {
        Self.stillOpenError(scene, writeWait: settings.writeWait)
    }

    static func stillOpenError(_ scene: SceneID, writeWait: Duration) -> SceneSyncError {
        SceneSyncError(
            .unavailable,
            "\(scene.fileName) is still open for writing by another process after scenes.write_wait_ms ("
                + "\(Int(writeWait / .milliseconds(1))) ms); try again once it is closed")
    }
}
