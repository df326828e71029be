import SceneSyncCore

@testable import SceneSyncDaemon

extension EngineSimulation {
    /// One random step of the schedule.
    mutating func step() {
        steps += 1
        switch rng.below(111) {
        case 0..<22: appSaves()
        case 22..<40: deliverEvents()
        case 40..<50: clientSends()
        case 50..<55: clientReadsAnswers()
        case 55..<82: advance()
        case 82..<90: finishReservation()
        case 90..<93: triggerSnapshot()
        case 93..<96: requestPhase()
        case 96..<100: finishSnapshot()
        case 100..<103: overflow()
        case 103..<106: tick()
        default: subscriberReads()
        }
        check()
    }

    /// Delivers every event and runs every step to its end, snapshots included: the state a quiet daemon reaches.
    mutating func settle() {
        listingsMayFail = false
        let deadline = steps + 10_000
        while !kernelQueue.isEmpty || inFlight != nil || snapshots.isWriting || revisions.writing != nil
            || rescanOwed || !clientIsSettled
        {
            steps += 1
            // A schedule settles in a few dozen steps; one that does not is stuck (a reader nobody releases).
            guard steps < deadline else {
                fail("never settles: \(clientIsSettled ? "" : "the client's connection is stuck")")
                return
            }
            if inFlight == nil, !clientIsSettled {
                settleClient()
            } else if rescanOwed, inFlight == nil {
                tick()
            } else if !kernelQueue.isEmpty {
                deliverEvents()
            } else if revisions.writing != nil {
                finishReservation()
            } else if inFlight != nil {
                advance()
            } else {
                finishSnapshot()
            }
            check()
        }
        subscriberReads()
        checkSettled()
    }

    // MARK: - Apps

    /// An app saves a scene (rename into place) or removes its file.
    mutating func appSaves() {
        let scene = rng.pick(scenes)
        let bytes = rng.chance(12) ? nil : rng.pick(paths).bytes
        if let previous = currentAppWrite[scene], !appWrites[previous].seen {
            note("app write w\(previous) overwritten before the daemon read it")
        }
        files[scene] = bytes
        currentAppWrite[scene] = appWrites.count
        appWrites.append(AppWrite(scene: scene, bytes: bytes))
        kernelQueue.append(bytes == nil ? .removed(scene) : .changed(scene))
        let action = bytes.map { "writes \(String(decoding: $0, as: UTF8.self)) to" } ?? "removes"
        let index = appWrites.count - 1
        note("app write w\(index): \(action) \(scene)")
    }

    /// The engine takes what the kernel queued (a whole read, or only its start).
    mutating func deliverEvents() {
        guard !kernelQueue.isEmpty else { return }
        let count = rng.chance(50) ? kernelQueue.count : 1 + rng.below(kernelQueue.count)
        let events = Array(kernelQueue.prefix(count))
        kernelQueue.removeFirst(count)
        eventsTaken += events.count
        note("engine takes \(events.count) events")
        start(pipeline.enqueue(events: events))
    }

    /// The kernel's queue overflows: the events it held are lost, and an overflow takes their place.
    mutating func overflow() {
        guard !kernelQueue.isEmpty else { return }
        let lost = kernelQueue.count
        note("the kernel queue overflows, losing \(lost) events")
        kernelQueue = [.overflow]
    }

    /// The housekeeping tick: a rescan owed is retried as a pipeline step, as the engine's `tick` does.
    mutating func tick() {
        guard rescanOwed, inFlight == nil else { return }
        eventsTaken += 1
        note("tick retries the rescan")
        start(pipeline.enqueue(events: [.overflow]))
    }

    /// The rescan after an overflow: its listing may fail (EMFILE), and then it is owed; else every scene is read
    /// and merged, and the syncs that waited when it began are answered (their cookies' events may be lost).
    mutating func rescan() {
        if listingsMayFail, rng.chance(30) {
            rescanOwed = true
            note("the rescan cannot list the directory")
            return
        }
        rescanOwed = false
        let waiting = barriers.waitingCookies
        for scene in scenes { mergeFile(scene) }
        for cookie in waiting.sorted() {
            for phase in barriers.arrived(cookie) { triggerSnapshot(id: phase) }
        }
        note("rescanned")
    }

    // MARK: - Clients

    // MARK: - The pipeline

    mutating func start(_ start: PipelineMachine<SceneDirectoryEvent, [Request], Never, Int>.Start) {
        guard start == .start else { return }
        nextPipelineStep()
    }

    mutating func nextPipelineStep() {
        switch pipeline.next() {
        case .perform(.mergeFiles(let events)):
            inFlight = .merge(events)
        case .perform(.commit(let groups)):
            if let request = groups.joined().first(where: { $0.eventsTakenBefore > eventsMerged }) {
                fail("request \(request.id) is decided before the file events taken ahead of it are merged")
            }
            // The engine's own group commit: the simulation plays only its shell, one action per step.
            var run = CommitRun(groups: groups, requests: groups.map { $0.map(\.request) }) {
                SceneSyncError(.unavailable, "\($0) is still open")
            }
            let action = run.start(accepting: true, unknown: [], openWriters: [], store: store)
            inFlight = .commit(Commit(run: run, action: action))
            note("plans a group commit of \(groups.flatMap { $0.map(\.id) })")
        case .perform(.applyRemote):
            preconditionFailure("the simulation sends no remote batches")
        case .idle:
            inFlight = nil
        }
    }

    /// The shell's next action for the step in flight.
    mutating func advance() {
        switch inFlight {
        case nil:
            return
        case .merge(let events):
            // As `reserveForMerges`: one revision per file the events name, before any is merged.
            let named = events.flatMap { event -> [SceneID] in
                switch event {
                case .changed(let scene), .removed(let scene): [scene]
                case .overflow: scenes  // a rescan may change every scene
                case .modified, .marker, .directoryGone: []
                }
            }
            guard reserved(Set(named).count) else { return }
            merge(events)
            nextPipelineStep()
        case .commit(var commit):
            guard !commit.run.isOver else {
                finish(commit.action)
                nextPipelineStep()
                return
            }
            guard let report = perform(&commit) else {
                inFlight = .commit(commit)
                return
            }
            commit.action = commit.run.advance(report, store: &store)
            // The engine broadcasts the records in the turn that committed them: nothing comes between.
            if case .publish = commit.action, let published = perform(&commit) {
                commit.action = commit.run.advance(published, store: &store)
            }
            inFlight = .commit(commit)
        }
    }

    /// Performs the group commit's action as the engine's shell does, one step of it: `nil` while it is not done
    /// (a reservation to wait for, files still to write), otherwise its report. An answer ends the pipeline step.
    mutating func perform(_ commit: inout Commit) -> CommitRun<[Request]>.Report? {
        switch commit.action {
        case .readUnknownFiles, .mergeUnknownFiles:
            // Every file the simulation's store holds was merged from its events: none is unknown.
            fail("the group commit read a file the store knows")
            return nil
        case .reserve(let count):
            // As the engine: reserve, then take the watcher's events (none open a file for writing here).
            guard reserved(count) else { return nil }
            return .reserved(nil, openWriters: [])
        case .write(let files):
            guard commit.written == files.count else {
                write(files[commit.written], &commit)
                return nil
            }
            return .written(failures: commit.failures, displaced: commit.displaced)
        case .mergeDisplaced(let displaced):
            for (scene, content) in displaced where !isKnown(content, of: scene) {
                let bytes: [UInt8]?
                switch content {
                case .none: bytes = nil
                case .file(let content): bytes = content
                case .unknown: continue
                }
                if case .changed(let record) = store.applyFile(scene, bytes: bytes) {
                    publish(record)
                    commit.merged[scene] = record
                    note("a displaced app write of \(scene) merged at r\(record.clock.revision)")
                }
            }
            for write in commit.displacedWrites where appWrites[write].seenAt == nil {
                appWrites[write].seenAt = store.revision
            }
            return .displacedMerged(commit.merged)
        case .publish(let records):
            for record in records { publish(record) }
            // An app's write the daemon's rename displaced is kept as the conflict of the change that overwrote it.
            for (scene, app) in commit.merged {
                let overwrote = records.first { $0.scene == scene }
                if let overwrote, overwrote.conflict?.path != app.path {
                    fail("\(scene): the change written over an app's write does not keep it as its conflict")
                }
            }
            return .published(replicated: false)
        case .persistJournal:
            fail("the group commit waited for a cluster journal the simulation does not have")
            return nil
        case .answer, .refuse:
            preconditionFailure("an answer is the end of a run, performed by finish(_:)")
        }
    }

    /// Takes the answers of a group commit that is over.
    mutating func finish(_ action: CommitRun<[Request]>.Action) {
        switch action {
        case .answer(let answers):
            for (group, outcomes) in zip(answers.groups, answers.outcomes) {
                for (request, outcome) in zip(group, outcomes) {
                    if answered.updateValue(outcome, forKey: request.id) != nil {
                        fail("request \(request.id) answered twice")
                    }
                }
            }
            checkCommittedFiles(answers)
            for group in answers.groups { clientAnswered(group.map(\.id)) }
        case .refuse(let groups, let error):
            fail("a group commit of \(groups.joined().map(\.id)) was refused whole: \(error)")
        default:
            fail("a group commit was over before it answered")
        }
    }

    /// Reads the files the events name and merges them, as the engine merges a batch of file events.
    mutating func merge(_ events: [SceneDirectoryEvent]) {
        var listed = Set<SceneID>()
        for event in events {
            switch event {
            case .changed(let scene), .removed(let scene):
                if listed.insert(scene).inserted { mergeFile(scene) }
            case .marker(let name):
                // As in the engine, a marker splits the batch: what follows is read after it is handled.
                listed = []
                // As in the engine: while a rescan is owed, the syncs wait for it.
                guard !rescanOwed else {
                    note("a sync marker arrives while a rescan is owed; its syncs wait")
                    continue
                }
                let cookie = String(name.dropFirst(EngineCore.syncCookiePrefix.count))
                for phase in barriers.arrived(cookie) { triggerSnapshot(id: phase) }
            case .overflow:
                listed = []
                rescan()
            case .modified, .directoryGone:
                break
            }
        }
        eventsMerged += events.count
    }

    mutating func mergeFile(_ scene: SceneID) {
        markRead(scene)
        let outcome = store.applyFile(scene, bytes: files[scene])
        if let write = currentAppWrite[scene], appWrites[write].seenAt == nil {
            appWrites[write].seenAt = store.revision
        }
        switch outcome {
        case .changed(let record):
            publish(record)
        case .unchanged:
            break
        case .rejected(let error):
            fail("a valid file of \(scene) was rejected: \(error)")
        }
    }

    /// Renames one planned file into place (or removes it), or fails to, as a full disk would.
    mutating func write(_ file: (scene: SceneID, bytes: [UInt8]?), _ commit: inout Commit) {
        let (scene, bytes) = file
        commit.written += 1
        if rng.chance(8) {
            commit.failures[scene] = SystemError("rename", scene.fileName, errno: 28)
            note("the write of \(scene) fails")
            return
        }
        // The exchange-rename hands back what the file held: an app's write the daemon may not have read.
        markRead(scene)
        commit.displaced.append((scene, files[scene].map(FileSystem.Displaced.file) ?? .none))
        if let write = currentAppWrite[scene] { commit.displacedWrites.append(write) }
        files[scene] = bytes
        currentAppWrite[scene] = nil
        note("daemon writes \(scene)")
    }

    /// The engine's own test of a displaced content, with what the simulation knows of the files (it never writes
    /// content the store rejects, so nothing is rejected).
    func isKnown(_ displaced: FileSystem.Displaced, of scene: SceneID) -> Bool {
        SceneFileState<Never>().isKnown(displaced, of: scene, in: store)
    }

    mutating func markRead(_ scene: SceneID) {
        if let write = currentAppWrite[scene] { appWrites[write].seen = true }
    }

    mutating func publish(_ record: ChangeRecord) {
        if let last = broadcast.last, record.clock.revision != last.clock.revision + 1 {
            fail("r\(record.clock.revision) broadcast after r\(last.clock.revision)")
        }
        broadcast.append(record)
        subscriberView[record.scene] = record.path.map { (record.version, $0) }
        outbox.enqueue(subscription: 1, event: .change, body: Array(String(record.clock.revision).utf8))
    }

    /// The outbox's subscriber reads everything queued, as the connection's writer does: change events in order
    /// with no gap, or a lag marker, for which the engine queues a resync (the state as it is now). Like the
    /// writer, it reports only a batch it took as written: there is nothing to report for an empty queue.
    mutating func subscriberReads() {
        let batch = outbox.takeQueued()
        if !batch.isEmpty { outbox.wrote() }
        for item in batch {
            switch item {
            case .event(_, .change, let body):
                guard let revision = UInt64(String(decoding: body, as: UTF8.self)),
                    let record = broadcast.last(where: { $0.clock.revision == revision })
                else {
                    fail("the subscriber got a change event for no broadcast change")
                    continue
                }
                if revision != outboxSeen + 1 { fail("the subscriber got r\(revision) after r\(outboxSeen)") }
                outboxSeen = revision
                outboxView[record.scene] = record.path.map { (record.version, $0) }
            case .lagged:
                outbox.clearLag(subscription: 1)
                outboxView = [:]
                for scene in scenes {
                    if let state = store.scene(scene) { outboxView[scene] = (state.version, state.path) }
                }
                let revision = store.revision
                outboxSeen = revision
                note("the subscriber lagged, resynced at r\(revision)")
            default:
                fail("the subscriber's outbox holds an item the engine never queued")
            }
        }
    }

    // MARK: - Revisions

    /// Whether the step may hand out `count` revisions now; otherwise it waits (the shell's
    /// `reserveRevisions`), with the write it needs under way.
    mutating func reserved(_ count: Int) -> Bool {
        switch revisions.prepare(count, after: store.revision) {
        case .ready(let ahead):
            if let ahead { note("reserves r\(ahead) ahead") }
            return true
        case .mustWait(let mark):
            note(mark.map { "waits for r\($0) to be reserved" } ?? "waits for the reservation under way")
            return false
        }
    }

    /// The write of the revision mark under way reaches the disk.
    mutating func finishReservation() {
        guard let mark = revisions.writing else { return }
        markOnDisk = max(markOnDisk, mark)
        _ = revisions.finished(mark, failure: nil)
        note("r\(mark) reserved")
    }

    // MARK: - Snapshots

    /// `phase background`: a sync barrier (its cookie goes through the kernel's queue behind every earlier app
    /// write), then a snapshot.
    mutating func requestPhase() {
        let id = nextID
        nextID += 1
        let cookie = barriers.newCookie()
        if !barriers.wait(on: cookie, id) { fail("phase \(id)'s barrier was answered before it waited") }
        phaseWritesBefore[id] = appWrites.count
        kernelQueue.append(.marker(EngineCore.syncCookiePrefix + cookie))
        note("phase background \(id)")
    }

    mutating func triggerSnapshot() {
        let id = nextID
        nextID += 1
        triggerSnapshot(id: id)
    }

    mutating func triggerSnapshot(id: Int) {
        triggerRevisions[id] = store.revision
        if case .write = snapshots.trigger(.phase, waiter: id) {
            let revision = store.revision
            snapshotRevision = revision
            note("snapshot starts at r\(revision)")
        }
    }

    mutating func finishSnapshot() {
        guard snapshots.isWriting, let revision = snapshotRevision else { return }
        let (waiters, next) = snapshots.written()
        for waiter in waiters { snapshotsHeld[waiter] = revision }
        snapshotRevision = next == nil ? nil : store.revision
        note("snapshot of r\(revision) written")
    }
}
