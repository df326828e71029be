import SceneSyncCore

extension EngineCore {
    /// Merges a batch of file events in this turn when it needs nothing off the engine's thread: files changed or
    /// removed, few enough to read here, with their revisions reserved ahead (an app's save, the common case).
    /// Otherwise does nothing and returns `false`: ``process(_:from:then:)`` merges the batch, off the thread.
    func mergeNow(_ events: [SceneDirectoryEvent]) -> Bool {
        let (scenes, split) = EngineCore.scenes(namedIn: events, from: events.startIndex)
        guard split == events.endIndex else { return false }
        guard isInline(files: scenes.count), reserveAhead(scenes.count) else { return false }
        guard lifecycle.permits(.mergeFileChanges), !scenes.isEmpty else { return true }
        let contents = readFilesNow(scenes)
        for (scene, content) in zip(scenes, contents) { mergeFile(scene, content: content) }
        return true
    }

    /// Merges a batch of file events in order, from `start` on, then calls `done`. The files the events name are
    /// read together, off the engine, just before they are merged; the events that act on the whole directory (a
    /// rescan, a marker, the directory gone) split the batch, so no file is merged from content read before them.
    func process(_ events: [SceneDirectoryEvent], from start: Int = 0, then done: @escaping () -> Void) {
        guard start < events.endIndex, lifecycle.permits(.mergeFileChanges) else { return done() }
        let (scenes, split) = EngineCore.scenes(namedIn: events, from: start)
        // The event that split the batch, then the rest of it.
        let goOn = { [self] in
            guard split < events.endIndex else { return done() }
            let rest = { [self] in process(events, from: split + 1, then: done) }
            switch events[split] {
            case .overflow:
                rescan(reason: sceneFiles.rescanOwed ?? "an inotify queue overflow", then: rest)
            case .marker(let name):
                handleMarker(name, then: rest)
            case .directoryGone:
                directoryGone(then: rest)
            case .changed, .removed, .modified:
                rest()
            }
        }
        guard !scenes.isEmpty else { return goOn() }
        readFiles(scenes) { [self] contents in
            reserveForMerges(scenes.count) { [self] in
                guard lifecycle.permits(.mergeFileChanges) else { return done() }
                for (scene, content) in zip(scenes, contents) { mergeFile(scene, content: content) }
                goOn()
            }
        }
    }

    /// The scenes the events from `start` on name, each once in the order of its first event, up to the first
    /// event that acts on the whole directory (a rescan, a marker, the directory gone), and that event's index:
    /// `events.endIndex` when there is none.
    static func scenes(
        namedIn events: [SceneDirectoryEvent], from start: Int
    ) -> (scenes: [SceneID], split: Int) {
        var scenes: [SceneID] = []
        var listed = Set<SceneID>()
        for index in start..<events.endIndex {
            switch events[index] {
            case .changed(let scene), .removed(let scene):
                if listed.insert(scene).inserted { scenes.append(scene) }
            case .modified:
                break
            case .overflow, .marker, .directoryGone:
                return (scenes, index)
            }
        }
        return (scenes, events.endIndex)
    }

    /// The scene files as they are now, in the order of `scenes` (a few on the engine's thread, more on the
    /// blocking executor: ``fileStep(files:bytes:_:then:)``), for `done`.
    func readFiles(_ scenes: [SceneID], then done: @escaping ([Result<[UInt8]?, SystemError>]) -> Void) {
        let read = sceneFileReader
        fileStep(files: scenes.count, { read(scenes) }, then: done)
    }

    /// The scene files as they are now, read on the engine's thread: for a step small enough for it.
    func readFilesNow(_ scenes: [SceneID]) -> [Result<[UInt8]?, SystemError>] {
        sceneFileReader(scenes)
    }

    /// The blocking read of a step's files, with what it needs of the settings, for any thread.
    var sceneFileReader: @Sendable ([SceneID]) -> [Result<[UInt8]?, SystemError>] {
        let directory = settings.scenesDirectory
        let limit = settings.codec.maxFileBytes
        return { scenes in EngineCore.readSceneFiles(scenes, directory: directory, limit: limit) }
    }

    /// Reads the scene files, blocking.
    static func readSceneFiles(
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
}
