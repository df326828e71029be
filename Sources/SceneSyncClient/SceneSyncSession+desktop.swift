import Dispatch
import SceneSyncCore
import Synchronization

/// What desktop toolkits need besides the async API: their close and quit handlers have no async context, and
/// their windows need IDs of their own.
extension SceneSyncSession {
    /// Reports a phase and blocks the calling thread until it is done or `timeout` has passed: for a window's close
    /// handler or an app's quit handler that has no async context (GTK's `close-request`, an `atexit` hook).
    ///
    /// Waits on the calling thread, never on the main actor or the cooperative pool, so it works on a toolkit's
    /// main thread. Do not call it from async code: use ``phase(_:scene:)`` there.
    ///
    /// - Throws: ``SceneSyncClientError/Code/timedOut`` after `timeout`, or what ``phase(_:scene:)`` throws.
    @available(*, noasync, message: "blocks the thread: use the async phase(_:scene:) in async code")
    @discardableResult
    public func phase(_ phase: ScenePhase, scene: String, timeout: Duration) throws -> SnapshotInfo? {
        let outcome = Mutex<Result<SnapshotInfo?, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task.detached { [self] in
            let result: Result<SnapshotInfo?, any Error>
            do {
                result = .success(try await self.phase(phase, scene: scene))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        let components = timeout.components
        let nanoseconds = max(0, components.seconds) * 1_000_000_000 + components.attoseconds / 1_000_000_000
        if done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .timedOut {
            task.cancel()
            throw SceneSyncClientError(.timedOut, "phase \(phase.rawValue) of \(scene) took longer than \(timeout)")
        }
        let result = outcome.withLock { $0 }
        guard let result else {
            throw SceneSyncClientError(.timedOut, "phase \(phase.rawValue) of \(scene) did not finish")
        }
        return try result.get()
    }

    /// A new scene ID under an app's prefix, for a window that has none yet: `com.example.Recipes` gives
    /// `com.example.Recipes.window-5f1c9a2e7b3d4c60`. Random, so windows opened at once by several processes
    /// never share one.
    ///
    /// - Parameter prefix: The app's reverse-DNS name (letters, digits, `.`, `_`, `-`; starting with a letter or
    ///   digit), at most 104 characters so that the ID fits in a scene ID's 128.
    /// - Throws: ``SceneSyncClientError/Code/invalidSceneID`` for a prefix that cannot start a scene ID.
    public static func newSceneID(prefix: String) throws(SceneSyncClientError) -> String {
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() as UInt64, radix: 16)
        let id = prefix + ".window-" + String(repeating: "0", count: 16 - suffix.count) + suffix
        guard SceneID.isValid(id) else {
            throw SceneSyncClientError(
                .invalidSceneID, "\"\(prefix)\" cannot start a scene ID (letters, digits, '.', '_', '-'; at most 104)")
        }
        return id
    }
}
