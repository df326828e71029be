import SceneSyncCore

extension SceneEngine {
    /// Merges a batch of file events in this turn when it needs nothing off the engine's thread: files changed or
    /// removed, few enough to read here, with their revisions reserved ahead (an app's save, the common case).
    /// Otherwise does nothing and returns `false`: ``process(_:)`` merges the batch in a task of its own.
    func mergeNow(_ events: [SceneDirectoryEvent]) -> Bool {
        var scenes: [SceneID] = []
        var listed = Set<SceneID>()
        for event in events {
            switch event {
            case .changed(let scene), .removed(let scene):
                if listed.insert(scene).inserted { scenes.append(scene) }
            case .modified:
                break
            case .overflow, .marker, .directoryGone:
                return false
            }
        }
        guard SceneEngine.isInline(files: scenes.count), reserveAhead(scenes.count) else { return false }
        guard lifecycle.permits(.mergeFileChanges), !scenes.isEmpty else { return true }
        let contents = readFilesNow(scenes)
        for (scene, content) in zip(scenes, contents) { mergeFile(scene, content: content) }
        return true
    }

    /// Merges a batch of file events in order. The files the events name are read together, off the engine, just
    /// before they are merged; the events that act on the whole directory (a rescan, a marker, the directory gone)
    /// split the batch, so no file is merged from content read before them.
    func process(_ events: [SceneDirectoryEvent]) async {
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

    /// The scene files as they are now, read on the engine's thread: for a step small enough for it.
    func readFilesNow(_ scenes: [SceneID]) -> [Result<[UInt8]?, SystemError>] {
        SceneEngine.readSceneFiles(scenes, directory: settings.scenesDirectory, limit: settings.codec.maxFileBytes)
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
}
