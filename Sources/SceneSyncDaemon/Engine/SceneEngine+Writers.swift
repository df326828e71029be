import SceneSyncCore

extension SceneEngine {
    /// A client change waiting for an app to close the scene file it writes in place.
    struct WriterWaiter {
        let token: UInt64
        let continuation: CheckedContinuation<Void, Never>
    }

    /// The watcher to take events from; the watcher service attaches each one it starts.
    public func attach(_ watcher: InotifyWatcher) {
        self.watcher = watcher
    }

    /// Takes and handles every event the watcher read or the kernel holds now, in order.
    ///
    /// Called for every wake-up of the watcher, and before a client's change is decided: an app's write that
    /// happened before the request reached the engine (even one the watcher thread has not read yet) is then known,
    /// so a change is never decided on a half-written file nor written over one (§3).
    public func drainWatcher() {
        guard let watcher else { return }
        let events = watcher.takeEvents()
        if !events.isEmpty { handle(events) }
    }

    /// Waits until no writer holds the scene's file open, at most `settings.writeWait`.
    ///
    /// - Returns: whether the file is free now. While waiting, the engine serves everyone else.
    func waitForWriter(_ scene: SceneID) async -> Bool {
        drainWatcher()
        guard openWriters.contains(scene) else { return true }
        let wait = settings.writeWait
        guard wait > .zero else { return false }
        report.testCounters.writerWaits += 1
        let deadline = ContinuousClock.now + wait
        while openWriters.contains(scene), ContinuousClock.now < deadline {
            let token = nextWriterWaiter
            nextWriterWaiter += 1
            await withCheckedContinuation { continuation in
                writerWaiters[scene, default: []].append(WriterWaiter(token: token, continuation: continuation))
                tasks.spawn {
                    try? await Task.sleep(until: deadline, clock: .continuous)  // cancelled: expire at once
                    await self.expireWriterWaiter(scene, token: token)
                }
            }
            drainWatcher()
        }
        return !openWriters.contains(scene)
    }

    func resumeWriterWaiters(for scene: SceneID) {
        guard let waiters = writerWaiters.removeValue(forKey: scene) else { return }
        for waiter in waiters { waiter.continuation.resume() }
    }

    func resumeAllWriterWaiters() {
        let all = writerWaiters
        writerWaiters = [:]
        for waiters in all.values { for waiter in waiters { waiter.continuation.resume() } }
    }

    private func expireWriterWaiter(_ scene: SceneID, token: UInt64) {
        guard var waiters = writerWaiters[scene], let index = waiters.firstIndex(where: { $0.token == token }) else {
            return
        }
        let waiter = waiters.remove(at: index)
        writerWaiters[scene] = waiters.isEmpty ? nil : waiters
        waiter.continuation.resume()
    }
}
