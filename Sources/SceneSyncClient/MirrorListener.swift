import Synchronization

/// Someone following a ``ScenePath``'s changes: a ``ScenePath/changes`` sequence or an
/// ``ScenePath/onChange(deliver:_:)`` callback. Either keeps only the latest news for a consumer that does not keep
/// up, so a slow consumer costs one value, never a backlog.
enum MirrorListener<Route: Sendable>: Sendable {
    case stream(AsyncThrowingStream<[Route], any Error>.Continuation)
    case callback(ChangeCallback<Route>)

    /// Called outside the mirror's lock: a stream's termination handler takes that lock.
    func deliver(_ emission: MirrorEmission<Route>) {
        switch (self, emission) {
        case (.stream(let continuation), .routes(let routes)): continuation.yield(routes)
        case (.stream(let continuation), .failure(let error)): continuation.finish(throwing: error)
        case (.callback(let callback), .routes(let routes)): callback.offer(.success(routes))
        case (.callback(let callback), .failure(let error)): callback.offer(.failure(error))
        }
    }

    func finish() {
        switch self {
        case .stream(let continuation): continuation.finish()
        case .callback(let callback): callback.cancel()
        }
    }
}

/// A callback with the app's own delivery hook (a GLib idle source, a run loop, a dispatch queue). At most one
/// delivery is scheduled at a time, carrying the latest value when it runs.
final class ChangeCallback<Route: Sendable>: Sendable {
    typealias Handler = @Sendable (Result<[Route], SceneSyncClientError>) -> Void
    private let schedule: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let handler: Handler
    private let state = Mutex<(latest: Result<[Route], SceneSyncClientError>?, scheduled: Bool, cancelled: Bool)>(
        (nil, false, false))

    init(schedule: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void, handler: @escaping Handler) {
        self.schedule = schedule
        self.handler = handler
    }

    func offer(_ value: Result<[Route], SceneSyncClientError>) {
        let mustSchedule = state.withLock { state in
            guard !state.cancelled else { return false }
            state.latest = value
            defer { state.scheduled = true }
            return !state.scheduled
        }
        guard mustSchedule else { return }
        schedule { [self] in
            let value = state.withLock { state in
                defer {
                    state.latest = nil
                    state.scheduled = false
                }
                return state.cancelled ? nil : state.latest
            }
            if let value { handler(value) }
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
