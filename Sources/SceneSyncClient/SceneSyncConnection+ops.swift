public import SceneSyncCore

/// The typed ops of the protocol (docs/protocol.md). Each sends one request (see ``SceneSyncRequest`` for the fields) and decodes the answer.
extension SceneSyncConnection {
    /// Introduces this client: `client` becomes `origin.client` of the changes this connection makes, so watchers
    /// see who changed what.
    @discardableResult
    public func hello(client: String? = nil) async throws -> ServerInfo {
        try ServerInfo(response: try await send(.hello(client: client)))
    }

    /// Every scene's version, last-modified revision and depth, without paths.
    public func list() async throws -> SceneList {
        try SceneList(response: try await send(.list))
    }

    /// One scene with its path. Throws `SceneSyncError` `not_found` when it does not exist.
    public func get(_ scene: String) async throws -> FetchedScene {
        try FetchedScene(response: try await send(.get(scene)))
    }

    /// Replaces a scene's path (root first), creating the scene when it does not exist.
    ///
    /// - Parameters:
    ///   - scene: The scene ID.
    ///   - path: The new path, root first.
    ///   - format: The file format of a new or empty scene; by default `codable` when every element has a type.
    ///   - ifVersion: Compare-and-set: only if the scene is at this version (`0`: only if it does not exist).
    ///     Otherwise `SceneSyncError` `conflict`, with `SceneSyncError.current` holding the scene as it is.
    public func set(
        _ scene: String, path: [Element], format: SceneFormat? = nil, ifVersion: UInt64? = nil
    ) async throws -> ChangeResult {
        try ChangeResult(response: try await send(.set(scene, path: path, format: format, ifVersion: ifVersion)))
    }

    /// Pushes `elements` (root first) on top of the stack, creating the scene when it does not exist.
    public func push(_ scene: String, elements: [Element], ifVersion: UInt64? = nil) async throws -> ChangeResult {
        try ChangeResult(response: try await send(.push(scene, elements: elements, ifVersion: ifVersion)))
    }

    /// Pops `count` elements; `SceneSyncError` `out_of_range` when the stack is shallower, `not_found` when
    /// there is no such scene.
    public func pop(_ scene: String, count: UInt64 = 1, ifVersion: UInt64? = nil) async throws -> ChangeResult {
        try ChangeResult(response: try await send(.pop(scene, count: count, ifVersion: ifVersion)))
    }

    /// Pops every element, back to the root view.
    public func popToRoot(_ scene: String, ifVersion: UInt64? = nil) async throws -> ChangeResult {
        try ChangeResult(response: try await send(.popToRoot(scene, ifVersion: ifVersion)))
    }

    /// Deletes a scene and its file; returns the revision of the deletion.
    @discardableResult
    public func delete(_ scene: String, ifVersion: UInt64? = nil) async throws -> UInt64 {
        try await send(.delete(scene, ifVersion: ifVersion)).uint("revision", in: "delete response")
    }

    /// Subscribes to the scenes matching `patterns` (shell globs; all scenes by default).
    ///
    /// Without `since`, the subscription starts with a ``SceneSyncEvent/state(_:)`` per matching scene (unless
    /// `initial` is false), then ``SceneSyncEvent/synced(_:)``, then live changes. With `since`, it replays the
    /// changes after that clock, or sends a ``SceneSyncEvent/resync(_:)`` and the current state when it cannot.
    public func subscribe(
        patterns: [String]? = nil, since: Clock? = nil, initial: Bool = true
    ) async throws -> SceneSyncSubscription {
        let (stream, sink) = AsyncThrowingStream.makeStream(
            of: ReceivedEvent.self, bufferingPolicy: .bufferingOldest(Self.maxBufferedEvents))
        let response: JSONValue
        do {
            response = try await send(.subscribe(patterns: patterns, since: since, initial: initial), events: sink)
        } catch {
            sink.finish(throwing: error)
            throw error
        }
        let id = try response.uint("subscription", in: "subscribe response")
        sink.onTermination = { [weak self] termination in
            // A consumer that went away (rather than a connection that ended) leaves a subscription to clean up.
            guard case .cancelled = termination, let self else { return }
            self.forget(subscription: id)
            self.sendWithoutWaiting(.unsubscribe(id))
        }
        return SceneSyncSubscription(id: id, clock: try response.clock(in: "subscribe response"), received: stream)
    }

    /// Ends a subscription; its sequence finishes after the events the daemon sent before it stopped.
    public func unsubscribe(_ subscription: SceneSyncSubscription) async throws {
        _ = try await send(.unsubscribe(subscription.id))
        forget(subscription: subscription.id)
    }

    /// A scene's change records, newest first (at most `limit`). History is in memory only: it starts empty at each
    /// daemon start.
    public func history(_ scene: String, limit: UInt64? = nil) async throws -> [ChangeRecord] {
        let response = try await send(.history(scene, limit: limit))
        guard let records = response["records"]?.arrayValue else {
            throw SceneSyncConnectionError.protocolViolation("history response has no records")
        }
        return try records.map { (record) throws(SceneSyncConnectionError) in
            try record.change(in: "history record")
        }
    }

    /// Waits until every scene-file change made before the call has been merged; returns the clock then.
    public func sync() async throws -> Clock {
        try await send(.sync).clock(in: "sync response")
    }

    /// Reports a scene's phase. For `background` the daemon writes a snapshot first and this returns it.
    @discardableResult
    public func phase(_ scene: String, _ phase: ScenePhase) async throws -> SnapshotInfo? {
        let response = try await send(.phase(scene, phase))
        guard let snapshot = response["snapshot"], snapshot != .null else { return nil }
        return try SnapshotInfo(response: snapshot)
    }

    /// Writes a snapshot now and returns where.
    @discardableResult
    public func snapshot() async throws -> SnapshotInfo {
        try SnapshotInfo(response: try await send(.snapshot))
    }

    /// Makes the daemon re-read its configuration; returns once it has been applied. An invalid file throws
    /// `SceneSyncError` `invalid_config` and the old configuration stays.
    public func reload() async throws {
        _ = try await send(.reload)
    }

    /// The daemon's counters and gauges.
    /// The daemon's metrics in the Prometheus text exposition format, as node_exporter's textfile collector reads it.
    public func metrics() async throws -> String {
        let response = try await send(.metrics)
        guard let text = response["text"]?.stringValue else {
            throw SceneSyncConnectionError.protocolViolation("metrics response without text")
        }
        return text
    }

    public func stats() async throws -> DaemonStats {
        try DaemonStats(response: try await send(.stats))
    }
}
