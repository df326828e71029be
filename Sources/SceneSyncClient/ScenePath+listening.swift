extension ScenePath {
    /// The scene's routes after each change that did not come from this mirror's own writes (``update(isolation:_:)``,
    /// setting ``routes``): another window, another process, the CLI, the scene file, another host.
    ///
    /// Each access starts a new sequence, from the next change on. A consumer that does not keep up gets the
    /// latest routes, never a backlog. It never throws and never ends while the mirror is open: a lost daemon, a
    /// failed write or an element that does not decode goes to ``failures`` instead, and after a reconnect the
    /// sequence goes on with the changes made meanwhile. It finishes when the mirror is closed or released.
    ///
    /// Two windows of one process that show the same scene share one mirror (one per session and scene), so a
    /// change one of them makes is not news to the other here: both read ``routes``, which is `Observable`.
    public var changes: AsyncStream<[Route]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [Route].self, bufferingPolicy: .bufferingNewest(1))
        listen(.changes(continuation), ending: continuation)
        return stream
    }

    /// What went wrong while following the scene, as it happens: a value set through ``routes`` that could not be
    /// written or no longer applied (``SceneSyncClientError/Code/writeFailed``,
    /// ``SceneSyncClientError/Code/writeDropped``), a change holding an element that does not decode under
    /// ``UndecodableRoutes/fail`` (``SceneSyncClientError/Code/undecodableElement``), a daemon that stays
    /// unreachable past the session's request timeout (``SceneSyncClientError/Code/timedOut``).
    ///
    /// Each access starts a new sequence, from the next failure on; a slow consumer gets the latest
    /// ``maxBufferedFailures``. It never throws, and finishes when the mirror is closed or released.
    public var failures: AsyncStream<SceneSyncClientError> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SceneSyncClientError.self, bufferingPolicy: .bufferingNewest(Self.maxBufferedFailures))
        listen(.failures(continuation), ending: continuation)
        return stream
    }

    /// The failures a ``failures`` sequence holds for a consumer that does not keep up: the latest ones.
    public static var maxBufferedFailures: Int { 8 }

    private func listen<Value>(_ listener: MirrorListener<Route>, ending continuation: AsyncStream<Value>.Continuation)
    {
        guard let id = state.withLock({ $0.add(listener) }) else {
            continuation.finish()
            return
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.remove(id) }
        }
    }

    /// Calls `handler` after each change that did not come from this mirror's own writes, on the app's own loop.
    ///
    /// `deliver` schedules the call where the app wants it: a GLib idle source for a GTK app, a `DispatchQueue`,
    /// or (the default) right away on the mirror's task. At most one call is scheduled at a time and it carries the
    /// latest routes, so a busy loop is never flooded. A failure (see ``failures``) is delivered as `.failure`,
    /// before the routes that came with it, and the callback goes on.
    ///
    /// ```swift
    /// let observation = path.onChange(deliver: { work in mainLoop.idle(work) }) { result in
    ///     if case .success(let routes) = result { window.show(routes) }
    /// }
    /// ```
    ///
    /// - Returns: The observation; the callback stops when it is cancelled or released.
    public func onChange(
        deliver: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() },
        _ handler: @escaping @Sendable (Result<[Route], SceneSyncClientError>) -> Void
    ) -> ChangeObservation {
        let callback = ChangeCallback<Route>(schedule: deliver, handler: handler)
        guard let id = state.withLock({ $0.add(.callback(callback)) }) else {
            return ChangeObservation {}
        }
        return ChangeObservation { [weak self] in
            callback.cancel()
            _ = self?.state.withLock { $0.listeners.remove(id) }
        }
    }
}
