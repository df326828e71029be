import Synchronization

/// Someone following a ``ScenePath``: a ``ScenePath/changes`` or ``ScenePath/failures`` sequence, or an
/// ``ScenePath/onChange(deliver:_:)`` callback. Each keeps only the latest news for a consumer that does not keep
/// up, so a slow consumer costs a few values, never a backlog.
enum MirrorListener<Route: Sendable>: Sendable {
    case changes(AsyncStream<[Route]>.Continuation)
    case failures(AsyncStream<SceneSyncClientError>.Continuation)
    case callback(ChangeCallback<Route>)

    /// Called outside the mirror's lock: a stream's termination handler takes that lock. A sequence takes only its
    /// own kind of news, and never ends for it.
    func deliver(_ emission: MirrorEmission<Route>) {
        switch (self, emission) {
        case (.changes(let continuation), .routes(let routes)): continuation.yield(routes)
        case (.failures(let continuation), .failure(let error)): continuation.yield(error)
        case (.changes, .failure), (.failures, .routes): break
        case (.callback(let callback), .routes(let routes)): callback.offer(.success(routes))
        case (.callback(let callback), .failure(let error)): callback.offer(.failure(error))
        }
    }

    func finish() {
        switch self {
        case .changes(let continuation): continuation.finish()
        case .failures(let continuation): continuation.finish()
        case .callback(let callback): callback.cancel()
        }
    }
}

/// A callback with the app's own delivery hook (a GLib idle source, a run loop, a dispatch queue). At most one
/// delivery is scheduled at a time; it carries the failures since the last one (the latest few) and then the latest
/// routes, so a failure is never hidden by the routes that came with it.
final class ChangeCallback<Route: Sendable>: Sendable {
    typealias Handler = @Sendable (Result<[Route], SceneSyncClientError>) -> Void
    private let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let handler: Handler
    private let state = Mutex(Pending())

    private struct Pending {
        var routes: [Route]?
        var failures: [SceneSyncClientError] = []
        var scheduled = false
        var cancelled = false

        /// What a slow loop still gets of a burst of failures.
        static var maxFailures: Int { 8 }
    }

    init(schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, handler: @escaping Handler) {
        self.schedule = schedule
        self.handler = handler
    }

    func offer(_ value: Result<[Route], SceneSyncClientError>) {
        let mustSchedule = state.withLock { state in
            guard !state.cancelled else { return false }
            switch value {
            case .success(let routes): state.routes = routes
            case .failure(let error):
                state.failures.append(error)
                if state.failures.count > Pending.maxFailures { state.failures.removeFirst() }
            }
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard mustSchedule else { return }
        schedule { [self] in
            let (failures, routes) = state.withLock { state in
                defer {
                    state.routes = nil
                    state.failures = []
                    state.scheduled = false
                }
                return state.cancelled ? ([], nil) : (state.failures, state.routes)
            }
            for failure in failures { handler(.failure(failure)) }
            if let routes { handler(.success(routes)) }
        }
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
    }
}

/// Ends an ``ScenePath/onChange(deliver:_:)`` callback: call ``cancel()``, or let it go out of scope.
public final class ChangeObservation: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = Mutex(onCancel)
    }

    deinit { cancel() }

    /// Stops the callback; a delivery already scheduled on the app's loop does nothing when it runs.
    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }
}
