import SceneSyncCore

extension ScenePath {
    /// Applies `body` to the current routes and writes the result, never over a change it has not seen.
    ///
    /// The write is a compare-and-set on the version this mirror last saw. When another writer got there first, the
    /// daemon answers `conflict` with the scene as it is; `body` is then applied again to that newer state and the
    /// write retried, until the session's request timeout (and at least ``minUpdateAttempts`` times). So two windows
    /// (or processes) changing one scene each keep the other's change. Values set through ``routes`` and not yet
    /// written are written first, each within the request timeout, so an update that follows a binding write to an
    /// unreachable daemon can take up to twice that timeout before it throws.
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

    /// The background writer behind the ``routes`` setter: writes each value set as the edit it made to the path
    /// it was based on, until none is left.
    func writeBindingValues() async {
        while true {
            let coding = self.coding
            let job = state.withLock { state in
                let format = state.confirmed.writeFormat
                return state.takeBindingValue { routes throws(SceneSyncClientError) in
                    try coding.encode(routes, as: format)
                }
            }
            switch job {
            case .stop(let outcome, let waiters):
                publish(outcome)
                for waiter in waiters { waiter.resume() }
                return
            case .dropped(let outcome):
                publish(outcome)
            case .write(let edit):
                await write(edit)
            }
        }
    }

    /// Writes one edit of the binding, on top of the scene as it is then; see ``routes``.
    private func write(_ edit: PathEdit<Route>) async {
        var base: ConfirmedScene<Route>
        do {
            base = try state.withLock { state throws(SceneSyncClientError) in try state.beginWrite() }
        } catch {
            publish(state.withLock { $0.bindingWriteFailed(error, writing: false) })
            return
        }
        do {
            let landed = try await attempt(
                isolation: nil, from: &base, what: "writing the routes of \(scene)"
            ) { base throws(SceneSyncClientError) in
                guard let target = edit.apply(to: base.view, routes: base.routes) else {
                    throw MirrorState<Route>.dropped(edit)
                }
                return target
            }
            publish(
                state.withLock {
                    $0.bindingWriteLanded(
                        onto: landed.onto, result: landed.committed ?? landed.onto, committed: landed.committed != nil)
                })
        } catch {
            let failure =
                error as? SceneSyncClientError
                ?? SceneSyncClientError(.writeFailed, "writing the routes of \(scene) failed: \(error)")
            publish(state.withLock { $0.bindingWriteFailed(failure, writing: true) })
        }
    }

    /// One compare-and-set write with its retries; see ``update(isolation:_:)``.
    private func write(isolation: isolated (any Actor)?, _ body: (inout [Route]) throws -> Void) async throws {
        var base = try state.withLock { state throws(SceneSyncClientError) in try state.beginWrite() }
        var committed: ConfirmedScene<Route>? = nil
        do {
            committed = try await attempt(isolation: isolation, from: &base, what: "update \(scene)") { base in
                var routes = base.routes
                try body(&routes)
                return (try coding.encode(routes, as: base.writeFormat), routes)
            }.committed
        } catch {
            publish(state.withLock { $0.endWrite(committed: nil) })
            throw error
        }
        publish(state.withLock { $0.endWrite(committed: committed) })
    }

    /// Compare-and-set writes of what `next` makes of the scene, retried on the scene another writer left until the
    /// session's deadline. Returns the scene the last attempt built on, and what it made of it (nil when there was
    /// nothing to write). `what` names the write in a `timed_out` error: an `update`, or a value set on ``routes``.
    private func attempt(
        isolation: isolated (any Actor)?, from base: inout ConfirmedScene<Route>, what: String,
        _ next: (ConfirmedScene<Route>) throws -> (elements: [Element], routes: [Route])
    ) async throws -> (onto: ConfirmedScene<Route>, committed: ConfirmedScene<Route>?) {
        let scene = self.scene.rawValue
        // Each conflict means another writer's change landed, so the scene as a whole progresses; retrying until
        // the session's deadline (not a fixed count) lets a writer that lost a run of races still get its turn.
        let deadline = ContinuousClock.now + session.requestTimeout
        var attempt = 0
        while attempt < Self.minUpdateAttempts || ContinuousClock.now < deadline {
            attempt += 1
            if let undecodable = base.undecodable { throw undecodable }
            let (elements, routes) = try next(base)
            // Unchanged (under a policy, the part it shows): nothing to write, and the skipped elements stay.
            if base.exists, elements == base.view { return (base, nil) }
            let ifVersion = base.version
            let newFormat: SceneFormat? = base.exists ? nil : .codable
            do {
                let result = try await session.request(what, retryOnLoss: false) { connection in
                    try await connection.set(scene, path: elements, format: newFormat, ifVersion: ifVersion)
                }
                return (base, base.written(elements, routes, version: result.version, revision: result.revision))
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
                    var written = base.written(elements, routes, version: current.version, revision: current.modified)
                    written.format = current.format
                    return (base, written)
                }
                base = adopt(current)
            }
        }
        throw SceneSyncClientError(
            .tooManyConflicts,
            "\(what): \(scene) changed under every one of \(attempt) attempts in \(session.requestTimeout)")
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
        let decoded = current.map { decode($0.path) } ?? .empty
        let (outcome, base) = state.withLock { $0.adopt(current, decoded: decoded) }
        publish(outcome)
        return base
    }
}
