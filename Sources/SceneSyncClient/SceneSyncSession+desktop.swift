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
        try blocking("phase \(phase.rawValue) of \(scene)", timeout: timeout) {
            try await self.phase(phase, scene: scene)
        }
    }

    /// Reports a phase and returns at once: for synchronous callbacks that must not wait, such as a window being
    /// shown (`ScenePhase.active`) or losing focus (`ScenePhase.inactive`). `completion`, if given, is called
    /// with the outcome on a thread of the library's, not the app's loop.
    ///
    /// An app about to exit must not use it for `ScenePhase.background`: the process may end before the report
    /// is sent. Use the blocking ``phase(_:scene:timeout:)`` there.
    public func reportPhase(
        _ phase: ScenePhase, scene: String,
        completion: (@Sendable (Result<SnapshotInfo?, any Error>) -> Void)? = nil
    ) {
        Task.detached { [self] in
            do {
                let snapshot = try await self.phase(phase, scene: scene)
                completion?(.success(snapshot))
            } catch {
                completion?(.failure(error))
            }
        }
    }

    /// Opens a live mirror of one scene and blocks the calling thread until it is open or `timeout` has passed:
    /// for an app's launch code that has no async context. See ``path(_:as:undecodable:)``.
    ///
    /// - Throws: ``SceneSyncClientError/Code/timedOut`` after `timeout`, or what ``path(_:as:undecodable:)`` throws.
    @available(*, noasync, message: "blocks the thread: use the async path(_:as:undecodable:) in async code")
    public func path<Route: Codable & Sendable>(
        _ scene: String, as type: Route.Type, undecodable: UndecodableRoutes = .fail, timeout: Duration
    ) throws -> ScenePath<Route> {
        try blocking("opening \(scene)", timeout: timeout) {
            try await self.path(scene, as: type, undecodable: undecodable)
        }
    }

    /// The IDs of the existing scenes that match `pattern`, sorted, blocking the calling thread until the daemon
    /// answers or `timeout` has passed: the windows to reopen, from launch code that has no async context. See
    /// ``sceneIDs(matching:)``.
    @available(*, noasync, message: "blocks the thread: use the async sceneIDs(matching:) in async code")
    public func sceneIDs(matching pattern: String, timeout: Duration) throws -> [String] {
        try blocking("listing \(pattern)", timeout: timeout) { try await self.sceneIDs(matching: pattern) }
    }

    /// Runs `operation` in a task of its own and waits for it on the calling thread, at most `timeout`. The wait is
    /// a semaphore, so the calling thread (a toolkit's main thread) is simply blocked; the operation never needs it.
    private func blocking<Value: Sendable>(
        _ what: String, timeout: Duration, _ operation: @escaping @Sendable () async throws -> Value
    ) throws -> Value {
        let outcome = Mutex<Result<Value, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let task = Task.detached {
            let result: Result<Value, any Error>
            do {
                result = .success(try await operation())
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
            throw SceneSyncClientError(.timedOut, "\(what) took longer than \(timeout)")
        }
        guard let result = outcome.withLock({ $0 }) else {
            throw SceneSyncClientError(.timedOut, "\(what) did not finish")
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
