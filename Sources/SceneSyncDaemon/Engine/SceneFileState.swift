import SceneSyncCore

/// What the engine knows of the scene files beyond their content: which are being written by an app (and the
/// client changes waiting for them), which changes wait to be merged again, which content was rejected, and
/// whether a rescan is owed.
///
/// A value with no I/O: the engine reads and writes the files, and tells this type what it found. Generic over the
/// waiter, like ``SyncBarriers``, so that it is tested with plain values.
struct SceneFileState<Waiter> {
    /// Scene files written in place and not closed yet: not a change until closed (§3).
    private(set) var openWriters: Set<SceneID> = []
    /// Client changes waiting for such a writer to close its file, by scene, with the token that expires each.
    private var writerWaiters: [SceneID: [(token: UInt64, waiter: Waiter)]] = [:]
    private var nextWriterWaiter: UInt64 = 1
    /// Scene files whose change could not be merged because no revision could be reserved (a full or failing state
    /// directory): merged again, from their content then, at every housekeeping tick until it works.
    private(set) var deferredMerges: Set<SceneID> = []
    /// The digest of each scene's rejected file content: the same bad content merged again (a second event for one
    /// write, a rescan) is not warned about twice, and when the daemon's rename displaces it, it is known, not an
    /// app's new write. Cleared when a good file or the file's removal is merged.
    private var rejectedDigests: [SceneID: UInt64] = [:]
    /// Why a rescan is owed: its listing of the directory failed (EMFILE, ENOMEM), and the housekeeping tick
    /// retries it.
    private(set) var rescanOwed: String? = nil
    /// A moment (nanoseconds since the epoch) by which every change made to the scenes directory was merged, or is
    /// one of those above (open, deferred, rejected): see ``SceneFileIndex``.
    private(set) var settledBefore: Int64? = nil

    // MARK: - Writers

    func isOpen(_ scene: SceneID) -> Bool { openWriters.contains(scene) }

    /// Takes one watcher event in kernel order, before its merge is queued, and hands back the waiters it frees:
    /// a waiting change then queues behind the event, so the writer's content is merged first.
    mutating func take(_ event: SceneDirectoryEvent) -> [Waiter] {
        switch event {
        case .changed(let scene), .removed(let scene):
            openWriters.remove(scene)
            return writerWaiters.removeValue(forKey: scene)?.map(\.waiter) ?? []
        case .modified(let scene):
            openWriters.insert(scene)
            return []
        case .overflow:
            // Lost events may include the close of a writer: which files are still open is unknown now. The rescan
            // reads them all; one still being written is merged again when its writer closes it.
            return closeAll()
        case .marker, .directoryGone:
            return []
        }
    }

    /// Forgets every open writer (an overflow, a vanished directory) and hands back every waiter.
    mutating func closeAll() -> [Waiter] {
        openWriters.removeAll()
        let all = writerWaiters.values.flatMap { $0.map(\.waiter) }
        writerWaiters = [:]
        return all
    }

    /// Registers a waiter for the scene's writer to close; the token expires it (``expire(_:token:)``).
    mutating func wait(for scene: SceneID, _ waiter: Waiter) -> UInt64 {
        let token = nextWriterWaiter
        nextWriterWaiter += 1
        writerWaiters[scene, default: []].append((token, waiter))
        return token
    }

    /// The waiter of `token` when its time is up; `nil` when a close already freed it.
    mutating func expire(_ scene: SceneID, token: UInt64) -> Waiter? {
        guard var waiters = writerWaiters[scene], let index = waiters.firstIndex(where: { $0.token == token }) else {
            return nil
        }
        let waiter = waiters.remove(at: index).waiter
        writerWaiters[scene] = waiters.isEmpty ? nil : waiters
        return waiter
    }

    // MARK: - Deferred merges

    /// A file change that could not be merged now; whether it is the first for the scene (said once).
    mutating func deferMerge(_ scene: SceneID) -> Bool { deferredMerges.insert(scene).inserted }

    /// The scene's file was merged; whether that was the last deferred merge.
    mutating func merged(_ scene: SceneID) -> Bool {
        deferredMerges.remove(scene) != nil && deferredMerges.isEmpty
    }

    /// The deferred merges to retry now, in ID order: not those whose file an app still writes.
    var mergesToRetry: [SceneID] { deferredMerges.sorted().filter { !openWriters.contains($0) } }

    /// Whether the store does not know what the scene's file holds, so it must be read before it is replaced: a
    /// merge that waits, or a scene whose file is not the one the store last read or wrote.
    func mustRead(_ scene: SceneID, in store: SceneStore) -> Bool {
        deferredMerges.contains(scene) || (store.scene(scene) != nil && store.fileDigest(scene) == nil)
    }

    // MARK: - Rejected content

    /// The scene's file was merged as good content, or as removed.
    mutating func accepted(_ scene: SceneID) { rejectedDigests[scene] = nil }

    /// The scene's file content was rejected; whether it is new (warned about once until it changes).
    mutating func rejected(_ scene: SceneID, digest: UInt64) -> Bool {
        rejectedDigests.updateValue(digest, forKey: scene) != digest
    }

    func isRejected(_ scene: SceneID, digest: UInt64) -> Bool { rejectedDigests[scene] == digest }

    /// The daemon replaced these scenes' files: what was rejected there is gone.
    mutating func replaced(_ scenes: some Sequence<SceneID>) {
        guard !rejectedDigests.isEmpty else { return }
        for scene in scenes { rejectedDigests[scene] = nil }
    }

    // MARK: - Settled moments

    /// The engine took every event the kernel held for changes made before `moment` and found none, with nothing
    /// left to merge: each file is now what the store knows of it, or is tracked here.
    mutating func settled(at moment: Int64) {
        guard rescanOwed == nil else { return }
        settledBefore = max(settledBefore ?? moment, moment)
    }

    /// The scenes whose file the store may not know: a file written in place and not closed, a merge that waits,
    /// rejected content.
    var unsettledScenes: Set<SceneID> { openWriters.union(deferredMerges).union(rejectedDigests.keys) }

    // MARK: - Rescans

    /// A rescan could not list the directory; whether it is the first failure in a row (logged once).
    mutating func listingFailed(reason: String) -> Bool {
        defer { rescanOwed = reason }
        return rescanOwed == nil
    }

    /// A rescan listed the directory; whether one was owed (its recovery is logged).
    mutating func listingWorked() -> Bool {
        defer { rescanOwed = nil }
        return rescanOwed != nil
    }
}
