import SceneSyncCore

extension EngineCore {
    /// The watcher to take events from; the watcher service attaches each one it starts.
    func attach(_ watcher: InotifyWatcher) {
        attachments.watcher = watcher
        // Watched on the engine's own loop (as in the daemon): the loop hands the events over in the turn that read
        // them, with no task between them and the engine.
        guard watcher.eventLoop.inEventLoop else { return }
        // Both weak: the watcher's reader holds this handler, and the engine holds the watcher.
        watcher.deliver { [weak self, weak watcher] in
            // A watcher replaced meanwhile (the scenes directory was removed) announces nothing more.
            guard let self, let watcher, attachments.watcher === watcher else { return }
            // The loop read them a moment ago: no read of the descriptor again, which would find nothing.
            let events = watcher.takeReadEvents()
            if !events.isEmpty { handle(.fileEvents(events, watcherJustDrained: true)) }
        }
    }

    /// Takes and handles every event the watcher read or the kernel holds now, in order.
    ///
    /// Called for every wake-up of the watcher, and before a client's change is decided: an app's write that
    /// happened before the request reached the engine (even one the watcher's loop has not read yet) is then known,
    /// so a change is never decided on a half-written file nor written over one (§3).
    func drainWatcher() {
        guard let watcher = attachments.watcher else { return }
        let moment = SceneFileIndex.now()
        // Not a blocking call: the inotify descriptor is non-blocking, so this read takes what the kernel holds and
        // returns at once, which is what lets a change be decided in the same turn.
        let events = watcher.takeEvents()
        if !events.isEmpty {
            take(events, watcherJustDrained: true)
        } else if !pipeline.isRunning, lifecycle.permits(.mergeFileChanges) {
            // Every change made before `moment` had its event queued by then, and all of them are merged.
            sceneFiles.settled(at: moment)
        }
    }

    /// Waits until no writer holds the scene's file open, at most `settings.writeWait`, then tells `done` whether
    /// the file is free. While waiting, the engine serves everyone else.
    func waitForWriter(_ scene: SceneID, then done: @escaping (Bool) -> Void) {
        drainWatcher()
        guard sceneFiles.isOpen(scene) else { return done(true) }
        let wait = settings.writeWait
        guard wait > .zero else { return done(false) }
        report.testCounters.writerWaits += 1
        waitForWriter(scene, until: .now + wait, then: done)
    }

    private func waitForWriter(
        _ scene: SceneID, until deadline: ContinuousClock.Instant, then done: @escaping (Bool) -> Void
    ) {
        guard sceneFiles.isOpen(scene), ContinuousClock.now < deadline else { return done(!sceneFiles.isOpen(scene)) }
        let token = sceneFiles.wait(for: scene) { [self] in
            drainWatcher()
            waitForWriter(scene, until: deadline, then: done)
        }
        schedule(at: deadline) { [self] in
            if let waiter = sceneFiles.expire(scene, token: token) { waiter() }
        }
    }
}
