import SceneSyncCore

extension ScenePath {
    /// Applies `body` to the current routes and writes the result, never over a change it has not seen.
    ///
    /// The write is a compare-and-set on the version this mirror last saw. When another writer got there first, the
    /// daemon answers `conflict` with the scene as it is; `body` is then applied again to that newer state and the
    /// write retried, until the session's request timeout (and at least ``minUpdateAttempts`` times). So two windows
    /// (or processes) changing one scene each keep the other's change. Values set through ``routes`` and not yet written are written first.
    ///
    /// Elements are written in the scene's format: tagged with `String(reflecting: Route.self)` in a codable scene
    /// (a new scene is codable, as SwiftUI writes it), plain values in an array scene. Elements that did not
    /// change keep their bytes in the file.
    ///
    /// - Throws: ``SceneSyncClientError`` (``SceneSyncClientError/Code/tooManyConflicts``, ``SceneSyncClientError/Code/timedOut``,
    ///   ``SceneSyncClientError/Code/undecodableElement`` when the scene holds an element that is not a `Route`),
    ///   `SceneSyncError` when the daemon refuses the write (`forbidden`, `unavailable`), or what `body` throws.
    ///
    /// `body` runs in the caller's isolation (the main actor for a SwiftUI view, or none), so it may use whatever
    /// the caller may; the rest of the write does not need that isolation.
    public func update(
        isolation: isolated (any Actor)? = #isolation, _ body: (inout [Route]) throws -> Void
    ) async throws {
        await flushPendingWrites()
        try await write(isolation: isolation, body)
    }

    /// Waits until every write of this mirror has ended: values set through ``routes`` and updates in flight.
    func flushPendingWrites() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let pending = state.withLock { state in
                guard state.hasPendingWrites else { return false }
                state.flushWaiters.append(continuation)
                return true
            }
            if !pending { continuation.resume() }
        }
    }

    /// The background writer behind the ``routes`` setter: writes the latest value set until none is left.
    func writeBindingValues() async {
        while true {
            let (value, waiters, outcome) = state.withLock { $0.takeBindingValue() }
            guard let value else {
                publish(outcome)
                for waiter in waiters { waiter.resume() }
                return
            }
            do {
                try await write(isolation: nil) { $0 = value }
            } catch {
                let failure =
                    error as? SceneSyncClientError
                    ?? SceneSyncClientError(.writeFailed, "writing the routes of \(scene) failed: \(error)")
                publish(state.withLock { $0.bindingWriteFailed(failure) })
            }
        }
    }

    /// One compare-and-set write with its retries; see ``update(isolation:_:)``.
    private func write(isolation: isolated (any Actor)?, _ body: (inout [Route]) throws -> Void) async throws {
        var base = try state.withLock { state throws(SceneSyncClientError) in try state.beginWrite() }
        var committed: ConfirmedScene<Route>? = nil
        do {
            committed = try await attempt(isolation: isolation, body, from: &base)
        } catch {
            publish(state.withLock { $0.endWrite(committed: nil) })
            throw error
        }
        publish(state.withLock { $0.endWrite(committed: committed) })
    }

    private func attempt(
        isolation: isolated (any Actor)?, _ body: (inout [Route]) throws -> Void, from base: inout ConfirmedScene<Route>
    ) async throws -> ConfirmedScene<Route>? {
        let scene = self.scene.rawValue
        // Each conflict means another writer's change landed, so the scene as a whole progresses; retrying until
        // the session's deadline (not a fixed count) lets a writer that lost a run of races still get its turn.
        let deadline = ContinuousClock.now + session.requestTimeout
        var attempt = 0
        while attempt < Self.minUpdateAttempts || ContinuousClock.now < deadline {
            attempt += 1
            if let undecodable = base.undecodable { throw undecodable }
            var routes = base.routes
            try body(&routes)
            let format = base.writeFormat
            let elements = try coding.encode(routes, as: format)
            if base.exists, elements == base.elements { return nil }
            let ifVersion = base.version
            let newFormat: SceneFormat? = base.exists ? nil : .codable
            do {
                let result = try await session.request("update \(scene)", retryOnLoss: false) { connection in
                    try await connection.set(scene, path: elements, format: newFormat, ifVersion: ifVersion)
                }
                var written = base
                written.elements = elements
                written.routes = routes
                written.version = result.version
                written.format = format
                written.exists = true
                written.undecodable = nil
                written.clock = base.clock.map { Clock(epoch: $0.epoch, revision: result.revision) }
                return written
            } catch let error as SceneSyncError where error.code == .conflict {
                // Retried at once: a conflict means another writer's change landed, so writers retrying in
                // lockstep still make progress, one per round. A pause here would only hand every round to the
                // writer that just won (it goes on with its next change at once), and a writer that keeps losing
                // would run out of time while the other finishes all of its changes.
                base = adopt(error.current)
            } catch let error as SceneSyncConnectionError {
                guard case .disconnected = error else { throw error }
                // The write may or may not have been applied: the scene as it is now tells.
                let current = try await currentScene()
                if let current, current.path == elements {
                    var written = base
                    written.elements = elements
                    written.routes = routes
                    written.version = current.version
                    written.format = current.format
                    written.exists = true
                    written.undecodable = nil
                    written.clock = base.clock.map { Clock(epoch: $0.epoch, revision: current.modified) }
                    return written
                }
                base = adopt(current)
            }
        }
        throw SceneSyncClientError(
            .tooManyConflicts,
            "\(scene) changed under every one of \(attempt) attempts to update it in \(session.requestTimeout)")
    }

    /// The scene as the daemon has it now; `nil` when it does not exist.
    private func currentScene() async throws -> SceneState? {
        let scene = self.scene.rawValue
        return try await session.request("get \(scene)") { connection in
            do {
                return try await connection.get(scene).scene
            } catch let error as SceneSyncError where error.code == .notFound {
                return nil
            }
        }
    }

    /// Takes in the scene another writer left (from a `conflict` or a re-read) as the next attempt's base.
    private func adopt(_ current: SceneState?) -> ConfirmedScene<Route> {
        let decoded = current.map { decode($0.path) } ?? .success([])
        let (outcome, base) = state.withLock { $0.adopt(current, decoded: decoded) }
        publish(outcome)
        return base
    }
}
