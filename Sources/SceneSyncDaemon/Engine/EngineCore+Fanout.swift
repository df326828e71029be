import Logging
import SceneSyncCore

extension EngineCore {
    /// Encodes a change once and hands the same bytes to every matching subscription.
    /// Returns whether the record went to the replicator.
    @discardableResult
    func broadcast(_ record: ChangeRecord) -> Bool {
        let replicated = replicate(record)
        guard !registry.subscriptions.isEmpty, lifecycle.permits(.broadcast) else { return replicated }
        var body: [UInt8] = []
        body.reserveCapacity(256)
        Wire.appendChangeMembers(record, to: &body)
        deliver(.change, body: body, matching: record.scene)
        return replicated
    }

    /// A warning about a scene goes to the subscriptions that match it; any other warning to every subscription.
    func broadcastWarning(_ code: WarningCode, _ message: String, scene: SceneID?, file: String? = nil) {
        guard !registry.subscriptions.isEmpty, lifecycle.permits(.broadcast) else { return }
        var body: [UInt8] = Array(#""code":""#.utf8)
        body.append(contentsOf: code.rawValue.utf8)
        body.append(literal: #"","message":"#)
        JSONWriter.appendString(message, to: &body)
        if let scene {
            body.append(literal: #","scene":"#)
            JSONWriter.appendString(scene.rawValue, to: &body)
            body.append(literal: #","file":"#)
            JSONWriter.appendString(file ?? filePath(scene), to: &body)
        } else if let file {
            body.append(literal: #","file":"#)
            JSONWriter.appendString(file, to: &body)
        }
        deliver(.warning, body: body, matching: scene)
    }

    /// An event for every subscription (`snapshot`, `heartbeat`).
    func broadcastToAll(event: EventName, body: [UInt8]) {
        guard lifecycle.permits(.broadcast) else { return }
        deliver(event, body: body, matching: nil)
    }

    func broadcastPhase(scene: SceneID, phase: String) {
        guard lifecycle.permits(.broadcast) else { return }
        var body: [UInt8] = Array(#""scene":"#.utf8)
        JSONWriter.appendString(scene.rawValue, to: &body)
        body.append(literal: #","phase":"#)
        JSONWriter.appendString(phase, to: &body)
        deliver(.phase, body: body, matching: scene)
    }

    /// Hands one encoded event to every subscription that matches `scene` (every subscription for `nil`): the
    /// body is encoded once, whatever the number of subscribers.
    ///
    /// The clock is read once for all of them: the time an event was queued starts its delivery latency, and the
    /// queue of every subscriber that keeps up is empty when the event comes.
    func deliver(_ event: EventName, body: [UInt8], matching scene: SceneID?) {
        let now = LoopInstant.now
        registry.forEachRecipient(of: scene) { recipient in
            recipient.payload.enqueue(subscription: recipient.id, event: event, body: body, at: now)
        }
    }

    func clockBody() -> [UInt8] {
        var body: [UInt8] = []
        Wire.appendClockMembers(store.clock, to: &body)
        return body
    }

    /// Heartbeats, and disconnection of lagging clients that stopped reading. Runs on the heartbeat timer; `now` is
    /// the time the tick carries.
    func tick(heartbeat: Bool, now: ContinuousClock.Instant) {
        // Retried as file events of the pipeline, in ID order, once no step is in flight: each is read afresh, so
        // the last content wins as always.
        if !sceneFiles.deferredMerges.isEmpty, !pipeline.isRunning, lifecycle.permits(.mergeFileChanges) {
            let retries = sceneFiles.mergesToRetry
            if !retries.isEmpty { run(pipeline.enqueue(events: retries.map(SceneDirectoryEvent.changed))) }
        }
        // A rescan that could not list the directory, as a pipeline step like the overflow it stands for.
        if sceneFiles.rescanOwed != nil, !pipeline.isRunning, lifecycle.permits(.mergeFileChanges) {
            run(pipeline.enqueue(events: [.overflow]))
        }
        if heartbeat { broadcastToAll(event: .heartbeat, body: clockBody()) }
        // An idle engine learns, once a tick, that everything up to now is merged (see ``SceneFileIndex``).
        drainWatcher()
        for connection in registry.stalled(timeout: limits.stallTimeout, now: now) {
            if case .log(let suppressed) = report.stallNotices.admit(at: now) {
                var metadata: Logger.Metadata = [
                    "connection": "\(connection.id)", "pid": "\(connection.credentials?.pid ?? 0)",
                ]
                if suppressed > 0 { metadata["suppressed"] = "\(suppressed) similar lines since the last one" }
                logger.notice(
                    "disconnecting a client whose output has not moved for socket.stall_timeout_s", metadata: metadata)
            }
            report.testCounters.stallCloses += 1
            connection.close()
        }
    }

    // MARK: - Subscriptions

    /// Registers a subscription and queues, in order: the response, the catch-up (changes since `since`, or a
    /// resync, or the initial state) and `synced`. Done in one call on the engine's loop, so no live change can slip in between.
    func subscribe(
        connection: UInt64, requestID: [UInt8], patterns: [ScenePattern], since: Clock?, initial: Bool
    ) {
        guard let subscription = registry.subscribe(connection: connection, patterns: patterns) else { return }
        let id = subscription.id

        var response = ResponseWriter(id: requestID)
        response.append("subscription", uint: id)
        response.appendClock(store.clock)
        subscription.outbox.enqueue(line: response.finish())

        if let since {
            if since.epoch != store.epoch {
                queueResync(subscription, reason: "epoch")
            } else if let changes = store.history.changes(after: since.revision) {
                for record in changes where subscription.matches(record.scene) {
                    var body: [UInt8] = []
                    Wire.appendChangeMembers(record, to: &body)
                    subscription.outbox.enqueue(subscription: id, event: .change, body: body)
                }
                subscription.outbox.enqueue(subscription: id, event: .synced, body: clockBody(), counted: false)
            } else {
                queueResync(subscription, reason: "compacted")
            }
        } else {
            if initial { queueStates(subscription) }
            subscription.outbox.enqueue(subscription: id, event: .synced, body: clockBody(), counted: false)
        }
        warnOfClusterOutage(subscription)
        publishStatus()
    }

    func queueResync(_ subscription: Subscription, reason: String) {
        var body: [UInt8] = Array(#""reason":"#.utf8)
        JSONWriter.appendString(reason, to: &body)
        subscription.outbox.enqueue(subscription: subscription.id, event: .resync, body: body, counted: false)
        queueStates(subscription)
        subscription.outbox.enqueue(subscription: subscription.id, event: .synced, body: clockBody(), counted: false)
    }

    /// Queues the `state` events of every matching scene as one catch-up: not the events themselves, which for a
    /// hundred thousand scenes would be megabytes held for one client (§6), but a marker, and a copy-on-write copy
    /// of the store as it is now. The connection's writer has them produced a chunk at a time as the socket takes
    /// them; live changes queue behind the marker and so follow the `synced` that ends the catch-up.
    func queueStates(_ subscription: Subscription) {
        registry.queueCatchUp(subscription, of: store)
        subscription.outbox.enqueueCatchUp(subscription: subscription.id)
    }

    /// The next chunk of the subscription's oldest catch-up (see ``SubscriptionRegistry/nextCatchUpChunk(subscription:)``).
    func nextCatchUpChunk(subscription id: UInt64) -> (lines: [UInt8], events: Int, isLast: Bool)? {
        registry.nextCatchUpChunk(subscription: id)
    }

    /// The connection's writer reached a lag marker: the client reads again, so bring it back in step.
    ///
    /// Not once the daemon drains: nothing is broadcast any more, and the `shutdown` event may be queued behind the
    /// marker already, which nothing may follow (§6). The client resumes with `since` on its next connection.
    func resyncLagged(subscription id: UInt64) {
        guard lifecycle.permits(.broadcast), let subscription = registry.subscriptions[id] else { return }
        subscription.outbox.clearLag(subscription: id)
        queueResync(subscription, reason: "lagged")
    }

    func unsubscribe(connection: UInt64, subscription id: UInt64) -> Bool {
        guard let subscription = registry.unsubscribe(connection: connection, subscription: id) else { return false }
        subscription.outbox.forget(subscription: id)
        publishStatus()
        return true
    }

    // MARK: - Connections

    func register(outbox: Outbox, credentials: PeerCredentials?, close: @escaping @Sendable () -> Void) -> UInt64 {
        let id = registry.register(outbox: outbox, credentials: credentials, close: close)
        if !lifecycle.permits(.acceptConnections) {
            // Too late to be served: say so and let the writer end the connection, so shutdown never waits on it.
            outbox.enqueue(line: EngineCore.shutdownLine)
            outbox.close()
        }
        return id
    }

    func unregister(connection: UInt64) {
        registry.unregister(connection: connection)
        publishStatus()
    }

    func setClientName(_ name: String?, connection: UInt64) {
        registry.setClientName(name, connection: connection)
    }

    /// Shutdown: one `shutdown` event per connection, without subscription.
    func announceShutdown() {
        for connection in registry.connections.values {
            connection.outbox.enqueue(line: EngineCore.shutdownLine)
        }
    }

    static let shutdownLine = Array(#"{"event":"shutdown"}"#.utf8) + [UInt8(ascii: "\n")]

    func newOutbox() -> Outbox { Outbox(limits: limits, counters: counters) }
}
