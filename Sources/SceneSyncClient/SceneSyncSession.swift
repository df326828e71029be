public import SceneSyncCore
import Synchronization

/// An app's link to `scenesyncd`: one per process.
///
/// ```swift
/// let session = SceneSyncSession()
/// let path = try await session.path("com.example.Recipes.window-1", as: Route.self)
/// try await path.update { $0.append(.recipe(id: 42)) }
/// for await routes in path.changes { show(routes) }
/// try await session.phase(.background, scene: "com.example.Recipes.window-1")
/// ```
///
/// It connects on first use and waits for the daemon; a socket-activated daemon answers once it is ready. After the
/// daemon restarts or the connection drops it reconnects with back-off: requests wait for the next connection, and
/// every live ``ScenePath`` resumes where it left off. Every request has a deadline (``requestTimeout``) and throws
/// ``SceneSyncClientError`` with ``SceneSyncClientError/Code/timedOut`` instead of hanging. The daemon's refusals are
/// `SceneSyncError` (its protocol code and message).
///
/// Nothing here needs the main actor: every member can be used from any thread or task, so a GTK or other desktop
/// app whose main loop is not the main actor's executor works the same as a SwiftUI app.
public final class SceneSyncSession: Sendable {
    /// The daemon's control socket.
    public let socketPath: String
    /// The name given in `hello`: it shows as `origin.client` of this session's changes.
    public let clientName: String?
    /// How long any one request may take, connecting included.
    public let requestTimeout: Duration
    let link: SessionLink
    /// The live mirrors by scene: one per `Route` type and policy.
    private let paths = Mutex<[String: [WeakPath]]>([:])

    /// - Parameters:
    ///   - socketPath: The daemon's socket; `nil` for this user's default (or `SCENESYNC_SOCKET`; see
    ///     ``SceneSyncSocket``).
    ///   - clientName: Shown as `origin.client` of this session's changes, so that watchers see who changed what.
    ///   - requestTimeout: The deadline of every request, connecting included.
    ///   - backoff: The waits between connection attempts.
    public init(
        socketPath: String? = nil, clientName: String? = nil, requestTimeout: Duration = .seconds(10),
        backoff: ReconnectBackoff = ReconnectBackoff()
    ) {
        let socketPath = socketPath ?? SceneSyncSocket.defaultPath()
        self.socketPath = socketPath
        self.clientName = clientName
        self.requestTimeout = requestTimeout
        self.link = SessionLink(socketPath: socketPath, clientName: clientName, backoff: backoff)
    }

    deinit {
        link.close()
    }

    /// Ends the session: its connection closes, waiting requests and later ones fail with
    /// ``SceneSyncClientError/Code/closed``, and its paths stop following the daemon.
    public func close() {
        link.close()
        let live = paths.withLock { paths in
            defer { paths = [:] }
            return paths.values.joined().compactMap(\.path)
        }
        for path in live { path.stopMirroring() }
    }

    /// The IDs of the existing scenes that match `pattern` (a shell glob over scene IDs: `*`, `?`, `[…]`), sorted:
    /// the windows to reopen at launch.
    public func sceneIDs(matching pattern: String) async throws -> [String] {
        let glob = ScenePattern(pattern)
        let list = try await request("list") { try await $0.list() }
        return list.scenes.map(\.scene.rawValue).filter { glob.matches($0) }
    }

    /// A live mirror of one scene, decoded as `Route`s: a scene that does not exist yet is an empty path.
    ///
    /// There is one mirror per session and scene: asking again for a scene with the same `Route` type and policy
    /// gives the same mirror while it lives, so two windows of one process that show one scene share it (each sees
    /// the other's changes in ``ScenePath/routes``, not in ``ScenePath/changes``). A window that must hear of
    /// another window's changes on ``ScenePath/changes`` uses a session of its own.
    ///
    /// - Parameters:
    ///   - scene: The scene ID (`com.example.Recipes.window-1`).
    ///   - type: The routes' type.
    ///   - undecodable: What to show when elements of the scene no longer decode as `Route` (after an app update):
    ///     fail (the default), keep the part below them, or start at the root. Nothing is written for it.
    /// - Throws: ``SceneSyncClientError`` with ``SceneSyncClientError/Code/undecodableElement`` when an element of
    ///   the scene is not a `Route` (under ``UndecodableRoutes/fail``; the message names its position, its tag and
    ///   why), ``SceneSyncClientError/Code/invalidSceneID`` for an ID that is not valid, and
    ///   ``SceneSyncClientError/Code/timedOut`` when the daemon does not answer in time.
    public func path<Route: Codable & Sendable>(
        _ scene: String, as type: Route.Type, undecodable: UndecodableRoutes = .fail
    ) async throws -> ScenePath<Route> {
        guard let id = SceneID(scene) else {
            throw SceneSyncClientError(.invalidSceneID, "\"\(scene)\" is not a valid scene ID")
        }
        let existing = paths.withLock { paths in
            paths[scene, default: []].lazy.compactMap { $0.path as? ScenePath<Route> }.first {
                $0.undecodable == undecodable
            }
        }
        if let existing { return existing }
        let path = try ScenePath<Route>(scene: id, session: self, undecodable: undecodable)
        do {
            try await withDeadline("following \(scene)") { try await path.startMirroring() }
        } catch {
            path.stopMirroring()
            throw error
        }
        paths.withLock { $0[scene, default: []].append(WeakPath(path: path)) }
        return path
    }

    /// Reports a scene's lifecycle phase (the `phase` op). For `ScenePhase.background` it first waits until every
    /// write this session made (including values set on ``ScenePath/routes`` and not yet written) is merged, and
    /// returns once the daemon has written its snapshot, with that snapshot; a failed snapshot throws
    /// `SceneSyncError` `unavailable`.
    ///
    /// On the desktop, report `.background` when a window closes, when the app quits, and on `.inactive` (a window
    /// that loses focus may be the last thing the user sees of it before logging out).
    @discardableResult
    public func phase(_ phase: ScenePhase, scene: String) async throws -> SnapshotInfo? {
        if phase == .background {
            let live = paths.withLock { $0.values.joined().compactMap(\.path) }
            try await withDeadline("writing the pending changes") {
                for path in live { await path.flushPendingWrites() }
            }
        }
        return try await request("phase \(phase.rawValue)") { try await $0.phase(scene, phase) }
    }

    /// Waits until every scene-file change made before the call is merged (the `sync` op); returns the clock then.
    public func sync() async throws -> Clock {
        try await request("sync") { try await $0.sync() }
    }

    /// Runs `operation` on the session's connection within ``requestTimeout``. A connection lost before the answer
    /// is tried again on the next one when `retryOnLoss` (reads, and writes that are safe to repeat).
    func request<Result: Sendable>(
        _ what: String, retryOnLoss: Bool = true,
        _ operation: @escaping @Sendable (SceneSyncConnection) async throws -> Result
    ) async throws -> Result {
        try await withDeadline(what) {
            while true {
                // A lost connection fails at once: without this, the retries could spin without ever yielding to
                // the deadline.
                try Task.checkCancellation()
                let connection = try await self.link.connection()
                do {
                    return try await operation(connection)
                } catch let error as SceneSyncConnectionError {
                    guard case .disconnected = error else { throw error }
                    self.link.dropped(connection)
                    guard retryOnLoss else { throw error }
                }
            }
        }
    }

    /// Runs `operation`, throwing ``SceneSyncClientError/Code/timedOut`` once ``requestTimeout`` has passed.
    func withDeadline<Result: Sendable>(
        _ what: String, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let timeout = requestTimeout
        let link = self.link
        return try await withThrowingTaskGroup(of: Result?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let result = first else {
                let why = link.lastFailure.map { " (\($0))" } ?? ""
                throw SceneSyncClientError(
                    .timedOut, "\(what): no answer from \(link.socketPath) within \(timeout)\(why)")
            }
            return result
        }
    }

    /// Forgets a mirror that ended.
    func forget(_ scene: String, _ mirror: (any PathMirror)?) {
        paths.withLock { paths in
            guard var entries = paths[scene] else { return }
            entries.removeAll { $0.path == nil || $0.path === mirror }
            paths[scene] = entries.isEmpty ? nil : entries
        }
    }
}

/// The session's view of a live ``ScenePath``: it must not keep the mirror alive.
struct WeakPath {
    weak var path: (any PathMirror)?
}

/// What the session needs of a ``ScenePath`` whatever its `Route`.
protocol PathMirror: AnyObject, Sendable {
    func flushPendingWrites() async
    func stopMirroring()
}
