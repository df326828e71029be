extension ScenePath {
    /// The scene's routes after each change that did not come from this mirror's own writes (``update(isolation:_:)``,
    /// setting ``routes``): another window, another process, the CLI, the scene file, another host.
    ///
    /// Each access starts a new sequence, from the next change on. A consumer that does not keep up gets the
    /// latest routes, never a backlog. The sequence throws ``SceneSyncClientError`` when a change cannot be taken
    /// in (an element that is not a `Route`; ``routes`` keeps its last good value) or a value set through
    /// ``routes`` could not be written, and then ends: read `changes` again to go on following. It finishes when
    /// the mirror is closed or released.
    public var changes: AsyncThrowingStream<[Route], any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: [Route].self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
        guard let id = state.withLock({ $0.add(.stream(continuation)) }) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.listeners.remove(id) }
        }
        return stream
    }

    /// Calls `handler` after each change that did not come from this mirror's own writes, on the app's own loop.
    ///
    /// `deliver` schedules the call where the app wants it: a GLib idle source for a GTK app, a `DispatchQueue`,
    /// or (the default) right away on the mirror's task. At most one call is scheduled at a time and it carries the
    /// latest routes, so a busy loop is never flooded. A failure (see ``changes``) is delivered as `.failure`, and
    /// the callback goes on.
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
