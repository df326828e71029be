/// The daemon's life, decided in one place: starting → ready → draining → stopped.
///
/// A value with no I/O, in the shape of postgres-nio's connection state machine: every input returns what the shell
/// must do, and what may happen in each state (merging, broadcasting, snapshots, serving) is answered by
/// ``permits(_:)`` alone. The engine holds it and asks it before every such step, so the promises of §4 and §7
/// follow from this table rather than from checks spread over the code:
///
/// - nothing is merged or broadcast once draining began, so the final snapshot holds the last revision any client
///   was told of, and files changed during the shutdown are merged at the next start, above that revision;
/// - a signal that arrives while starting is remembered and acted on once ready (one snapshot, one reload), and a
///   termination request while starting becomes a graceful shutdown as soon as the daemon is ready.
public struct DaemonLifecycle: Sendable, Equatable {
    public enum State: Sendable, Equatable, CustomStringConvertible {
        /// Restoring the snapshot and merging the scenes directory; the socket does not listen yet.
        case starting
        /// Serving.
        case ready
        /// Shutting down: clients were told, the final snapshot is being written; the state is frozen.
        case draining
        /// Done; nothing happens any more.
        case stopped

        public var description: String {
            switch self {
            case .starting: "starting"
            case .ready: "ready"
            case .draining: "draining"
            case .stopped: "stopped"
            }
        }
    }

    /// What the engine may do.
    public enum Activity: Sendable, Equatable, CaseIterable {
        /// Merge a scene file's change (watcher events, rescans, the start-up merge).
        case mergeFileChanges
        /// Accept a client's `set`/`push`/`pop`/`delete`.
        case acceptClientChanges
        /// Send `change` and other events to subscribers.
        case broadcast
        /// Write a snapshot.
        case writeSnapshot
        /// Serve a new connection.
        case acceptConnections
        /// Answer requests that only read (`get`, `list`, `stats`, …).
        case serveReads
    }

    /// What the shell must do.
    public enum Action: Sendable, Equatable {
        /// Write a snapshot with reason `signal`.
        case writeSnapshot
        /// Re-read the configuration.
        case reload
        /// Start the graceful shutdown.
        case beginShutdown
    }

    public private(set) var state: State = .starting
    /// Signals that came while starting: acted on, once each, when ready.
    private var deferredSnapshot = false
    private var deferredReload = false
    private var deferredShutdown = false

    public init() {}

    /// The table of what may happen in each state.
    public func permits(_ activity: Activity) -> Bool {
        switch (state, activity) {
        case (.starting, .mergeFileChanges), (.starting, .broadcast):
            // The start-up merge; nobody is connected yet, so broadcasting reaches no one.
            true
        case (.starting, _):
            false
        case (.ready, _):
            true
        case (.draining, .writeSnapshot), (.draining, .serveReads):
            // The final snapshot (requests that come now share it: the state no longer changes), and answers to
            // requests already read.
            true
        case (.draining, _), (.stopped, _):
            false
        }
    }

    /// A signal arrived. Returns what to do now; while starting, it is remembered instead.
    public mutating func receive(_ signal: DaemonSignal) -> Action? {
        switch (state, signal) {
        case (.starting, .backgroundPhase):
            deferredSnapshot = true
            return nil
        case (.starting, .reload):
            deferredReload = true
            return nil
        case (.starting, .terminate):
            deferredShutdown = true
            return nil
        case (.ready, .backgroundPhase):
            return .writeSnapshot
        case (.ready, .reload):
            return .reload
        case (.ready, .terminate):
            return .beginShutdown
        case (.draining, _), (.stopped, _):
            // The final snapshot is on its way; a reload or a second termination request changes nothing.
            return nil
        }
    }

    /// Restored, merged, watching and listening. Returns the deferred signals' actions, in the order to perform
    /// them. A termination request makes the others moot: the shutdown's own snapshot is the background snapshot.
    public mutating func becomeReady() -> [Action] {
        guard state == .starting else { return [] }
        state = .ready
        defer { (deferredSnapshot, deferredReload, deferredShutdown) = (false, false, false) }
        if deferredShutdown { return [.beginShutdown] }
        var actions: [Action] = []
        if deferredReload { actions.append(.reload) }
        if deferredSnapshot { actions.append(.writeSnapshot) }
        return actions
    }

    /// The graceful shutdown begins. Returns `false` when it already began (or the daemon never became ready, which
    /// the shell prevents by deferring termination until ready).
    public mutating func beginDraining() -> Bool {
        guard state == .ready else { return false }
        state = .draining
        return true
    }

    /// The final snapshot was written (or failed) and the clients were told.
    public mutating func stop() {
        guard state == .draining || state == .ready else { return }
        state = .stopped
    }
}
