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
/// conflict), or set ``routes`` from a UI binding: the value shows at once and is written in the background, as the
/// edit it made. Follow other writers' changes with ``changes`` or ``onChange(deliver:_:)``; this mirror's own
/// writes are not reported there. What goes wrong in the background is reported on ``failures``.
///
/// There is one mirror per session and scene: asking the session for the same scene again gives this one, so two
/// windows of one process showing one scene share it and see each other's changes in ``routes``, not in
/// ``changes``.
///
/// It is not bound to an actor: use it from any thread or task. Nothing it does waits for the main actor.
public final class ScenePath<Route: Codable & Sendable>: Observable, Sendable {
    /// The scene this mirrors.
    public let scene: SceneID
    let session: SceneSyncSession
    let coding: RouteCoding<Route>
    /// What ``routes`` shows of a scene whose elements no longer decode.
    public let undecodable: UndecodableRoutes
    let registrar = ObservationRegistrar()
    let state = Mutex(MirrorState<Route>())
    let mirror = Mutex<Task<Void, Never>?>(nil)

    /// Attempts ``update(isolation:_:)`` makes at least, however long they take, before it gives up with
    /// ``SceneSyncClientError/Code/tooManyConflicts``; within the session's request timeout it goes on trying.
    public static var minUpdateAttempts: Int { 3 }

    init(scene: SceneID, session: SceneSyncSession, undecodable: UndecodableRoutes) throws(SceneSyncClientError) {
        self.scene = scene
        self.session = session
        self.undecodable = undecodable
        self.coding = try RouteCoding<Route>()
    }

    deinit {
        mirror.withLock { $0?.cancel() }
        endListening()
    }

    /// The scene's path, root first.
    ///
    /// Setting it shows the new value at once (to this mirror's readers and observers) and writes it in the
    /// background, never as a blind overwrite: what is written is the edit the assignment made to the path it was
    /// based on, the routes it popped from the top and the ones it pushed. If another writer (a window, a process,
    /// the CLI, a host) changed the scene meanwhile, the edit is applied on top of the newer path, so that change
    /// stays; if it no longer applies there (the part of the path it kept was changed), it is dropped, the newer
    /// path comes back here and on ``changes``, and ``failures`` says so
    /// (``SceneSyncClientError/Code/writeDropped``). Values set faster than they are written are written as one
    /// edit. A write that fails comes back the same way: ``SceneSyncClientError/Code/writeFailed`` when the daemon
    /// refused it, ``SceneSyncClientError/Code/timedOut`` when no daemon answered within the session's request
    /// timeout.
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

    /// The elements of the scene that ``routes`` leaves out under the mirror's ``UndecodableRoutes`` policy, root
    /// first; empty when every element decodes. The scene file keeps them byte for byte until the app changes the
    /// path, which replaces them.
    public var skipped: [SkippedRoute] {
        registrar.access(self, keyPath: \.routes)
        return state.withLock { $0.confirmed.skipped }
    }

    /// The scene's last reported phase as it was when the mirror opened (``SceneSyncSession/phase(_:scene:)``):
    /// `ScenePhase.background` after a clean close; `ScenePhase.active` or `ScenePhase.inactive` when the
    /// process that showed it stopped without reporting the background phase (a crash, a kill, a power loss), so
    /// that an app can restore such a window at its root rather than where it crashed; `nil` when no phase was
    /// ever reported for it.
    public var lastPhase: ScenePhase? { state.withLock { $0.lastPhase } }

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
