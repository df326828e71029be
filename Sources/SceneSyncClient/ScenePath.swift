public import Observation
public import SceneSyncCore
import Synchronization

/// A live mirror of one scene's path, decoded as `Route`s: one per session and scene.
///
/// `routes` is the scene's path, root first, as SwiftUI's `NavigationStack(path:)` holds it. It follows every change
/// to the scene, wherever it comes from (another window, another process, the CLI, the scene file, another host),
/// and is `Observable`: reading it inside `withObservationTracking` (or a SwiftUI view) registers for its changes.
///
/// Write with ``update(isolation:_:)``, which never overwrites a change it has not seen (compare-and-set, retried on
/// conflict), or set ``routes`` from a UI binding: the value shows at once and is written in the background.
/// Follow other writers' changes with ``changes`` or ``onChange(deliver:_:)``; this mirror's own writes are not
/// reported there.
///
/// It is not bound to an actor: use it from any thread or task. Nothing it does waits for the main actor.
public final class ScenePath<Route: Codable & Sendable>: Observable, Sendable {
    /// The scene this mirrors.
    public let scene: SceneID
    let session: SceneSyncSession
    let coding: RouteCoding<Route>
    let registrar = ObservationRegistrar()
    let state = Mutex(MirrorState<Route>())
    let mirror = Mutex<Task<Void, Never>?>(nil)

    /// Attempts ``update(isolation:_:)`` makes at least, however long they take, before it gives up with
    /// ``SceneSyncClientError/Code/tooManyConflicts``; within the session's request timeout it goes on trying.
    public static var minUpdateAttempts: Int { 3 }

    init(scene: SceneID, session: SceneSyncSession) throws(SceneSyncClientError) {
        self.scene = scene
        self.session = session
        self.coding = try RouteCoding<Route>()
    }

    deinit {
        mirror.withLock { $0?.cancel() }
        endListening()
    }

    /// The scene's path, root first.
    ///
    /// Setting it shows the new value at once (to this mirror's readers and observers) and writes it in the
    /// background, the way ``update(isolation:_:)`` writes; values set faster than they are written are coalesced, the last
    /// one wins. A failed write is reported on ``changes`` and the daemon's state comes back.
    public var routes: [Route] {
        get {
            registrar.access(self, keyPath: \.routes)
            return state.withLock { $0.shown }
        }
        set {
            registrar.willSet(self, keyPath: \.routes)
            let startWriter = state.withLock { $0.setFromBinding(newValue) }
            registrar.didSet(self, keyPath: \.routes)
            if startWriter { Task { await self.writeBindingValues() } }
        }
    }

    /// The scene's version as this mirror last saw it; `0` while the scene does not exist.
    public var version: UInt64 { state.withLock { $0.confirmed.version } }

    /// Stops following the daemon: ``changes`` sequences finish and ``routes`` keeps its last value.
    public func close() {
        stopMirroring()
    }
}

extension ScenePath: PathMirror {
    func stopMirroring() {
        mirror.withLock { $0?.cancel() }
        endListening()
        session.forget(scene.rawValue, self)
    }

    /// Every listener finishes, and a ``SceneSyncSession/path(_:as:)`` still waiting fails.
    private func endListening() {
        let (listeners, waiter) = state.withLock { $0.finish() }
        waiter?.resume(throwing: CancellationError())
        for listener in listeners { listener.finish() }
    }
}
