import SceneSyncCore

extension SceneEngine {
    /// Encodes a change once and hands the same bytes to every matching subscription.
    func broadcast(_ record: ChangeRecord) {
        replicate(record)
        guard !subscriptions.isEmpty, lifecycle.permits(.broadcast) else { return }
        var body: [UInt8] = []
        body.reserveCapacity(256)
        Wire.appendChangeMembers(record, to: &body)
        for subscription in subscriptions.values where subscription.matches(record.scene) {
            subscription.outbox.enqueue(subscription: subscription.id, event: "change", body: body)
        }
    }

    /// A warning about a scene goes to the subscriptions that match it; any other warning to every subscription.
    func broadcastWarning(_ code: WarningCode, _ message: String, scene: SceneID?, file: String? = nil) {
        guard !subscriptions.isEmpty, lifecycle.permits(.broadcast) else { return }
        var body: [UInt8] = Array(#""code":""#.utf8)
        body.append(contentsOf: code.rawValue.utf8)
        body.append(contentsOf: #"","message":"#.utf8)
        JSONWriter.appendString(message, to: &body)
        if let scene {
            body.append(contentsOf: #","scene":"#.utf8)
            JSONWriter.appendString(scene.rawValue, to: &body)
            body.append(contentsOf: #","file":"#.utf8)
            JSONWriter.appendString(file ?? filePath(scene), to: &body)
        } else if let file {
            body.append(contentsOf: #","file":"#.utf8)
            JSONWriter.appendString(file, to: &body)
        }
        for subscription in subscriptions.values where scene.map(subscription.matches) ?? true {
            subscription.outbox.enqueue(subscription: subscription.id, event: "warning", body: body)
        }
    }

    /// An event for every subscription (`snapshot`, `heartbeat`).
    func broadcastToAll(event: String, body: [UInt8]) {
        guard lifecycle.permits(.broadcast) else { return }
        for subscription in subscriptions.values {
            subscription.outbox.enqueue(subscription: subscription.id, event: event, body: body)
        }
    }

    func broadcastPhase(scene: SceneID, phase: String) {
        guard lifecycle.permits(.broadcast) else { return }
        var body: [UInt8] = Array(#""scene":"#.utf8)
        JSONWriter.appendString(scene.rawValue, to: &body)
        body.append(contentsOf: #","phase":"#.utf8)
        JSONWriter.appendString(phase, to: &body)
        for subscription in subscriptions.values where subscription.matches(scene) {
            subscription.outbox.enqueue(subscription: subscription.id, event: "phase", body: body)
        }
    }

    func clockBody() -> [UInt8] {
        var body: [UInt8] = []
        Wire.appendClockMembers(store.clock, to: &body)
        return body
    }

    /// Heartbeats, and disconnection of lagging clients that stopped reading. Runs on the heartbeat timer.
    public func tick(heartbeat: Bool) {
        // Retried as file events of the pipeline, in ID order, once no step is in flight: each is read afresh, so
        // the last content wins as always.
        if !deferredMerges.isEmpty, !pipeline.isRunning, lifecycle.permits(.mergeFileChanges) {
            let retries = deferredMerges.sorted().filter { !openWriters.contains($0) }
            if !retries.isEmpty { run(pipeline.enqueue(events: retries.map(SceneDirectoryEvent.changed))) }
        }
        // A rescan that could not list the directory, as a pipeline step like the overflow it stands for.
        if rescanRetry != nil, !pipeline.isRunning, lifecycle.permits(.mergeFileChanges) {
            run(pipeline.enqueue(events: [.overflow]))
        }
        if heartbeat { broadcastToAll(event: "heartbeat", body: clockBody()) }
        let now = ContinuousClock.now
        for connection in connections.values
        where connection.outbox.isStalled(timeout: limits.stallTimeout, now: now) {
            logger.notice(
                "disconnecting a client whose output has not moved for socket.stall_timeout_s",
                metadata: ["connection": "\(connection.id)", "pid": "\(connection.credentials?.pid ?? 0)"])
            testCounters.stallCloses += 1
            connection.close()
        }
    }

    // MARK: - Subscriptions

    /// Registers a subscription and queues, in order: the response, the catch-up (changes since `since`, or a
    /// resync, or the initial state) and `synced`. Done in one actor turn, so no live change can slip in between.
    func subscribe(
        connection: UInt64, requestID: [UInt8], patterns: [ScenePattern], since: Clock?, initial: Bool
    ) {
        guard let context = connections[connection] else { return }
        let id = nextSubscriptionID
        nextSubscriptionID += 1
        let subscription = Subscription(id: id, connection: connection, patterns: patterns, outbox: context.outbox)
        subscriptions[id] = subscription

        var response = ResponseWriter(id: requestID)
        response.append("subscription", uint: id)
        response.appendClock(store.clock)
        context.outbox.enqueue(line: response.finish())

        if let since {
            if since.epoch != store.epoch {
                queueResync(subscription, reason: "epoch")
            } else if let changes = store.history.changes(after: since.revision) {
                for record in changes where subscription.matches(record.scene) {
                    var body: [UInt8] = []
                    Wire.appendChangeMembers(record, to: &body)
                    context.outbox.enqueue(subscription: id, event: "change", body: body)
                }
                context.outbox.enqueue(subscription: id, event: "synced", body: clockBody(), counted: false)
            } else {
                queueResync(subscription, reason: "compacted")
            }
        } else {
            if initial { queueStates(subscription) }
            context.outbox.enqueue(subscription: id, event: "synced", body: clockBody(), counted: false)
        }
        warnOfClusterOutage(subscription)
        publishStatus()
    }

    func queueResync(_ subscription: Subscription, reason: String) {
        var body: [UInt8] = Array(#""reason":"#.utf8)
        JSONWriter.appendString(reason, to: &body)
        subscription.outbox.enqueue(subscription: subscription.id, event: "resync", body: body, counted: false)
        queueStates(subscription)
        subscription.outbox.enqueue(subscription: subscription.id, event: "synced", body: clockBody(), counted: false)
    }

    /// Queues the `state` events of every matching scene as one catch-up: not the events themselves, which for a
    /// hundred thousand scenes would be megabytes held for one client (§6), but a marker, and a copy-on-write copy
    /// of the store as it is now. The connection's writer has them produced a chunk at a time as the socket takes
    /// them; live changes queue behind the marker and so follow the `synced` that ends the catch-up.
    func queueStates(_ subscription: Subscription) {
        catchUps[subscription.id, default: []].append(CatchUp(frozen: store))
        subscription.outbox.enqueueCatchUp(subscription: subscription.id)
    }

    /// The next `state` lines of the subscription's oldest catch-up, about ``CatchUp/chunkBytes`` at a time, how many
    /// events they hold, and whether they are its last (it is then forgotten, and the next call serves the next
    /// marker's); `nil` when the subscription is gone.
    func nextCatchUpChunk(subscription id: UInt64) -> (lines: [UInt8], events: Int, isLast: Bool)? {
        guard var queue = catchUps[id], !queue.isEmpty, let subscription = subscriptions[id] else {
            catchUps[id] = nil
            return nil
        }
        var catchUp = queue[0]
        var lines: [UInt8] = []
        var events = 0
        var scanned = 0
        while catchUp.next < catchUp.frozen.count, lines.count < CatchUp.chunkBytes, scanned < CatchUp.chunkScenes {
            let scene = catchUp.frozen.scene(atOffset: catchUp.next)
            catchUp.next += 1
            scanned += 1
            guard subscription.matches(scene.id) else { continue }
            lines.append(contentsOf: #"{"event":"state","subscription":"#.utf8)
            JSONWriter.appendUInt(id, to: &lines)
            lines.append(UInt8(ascii: ","))
            Wire.appendSceneMembers(scene, to: &lines)
            lines.append(contentsOf: "}\n".utf8)
            events += 1
        }
        if catchUp.next >= catchUp.frozen.count {
            queue.removeFirst()
            catchUps[id] = queue.isEmpty ? nil : queue
            return (lines, events, true)
        }
        queue[0] = catchUp
        catchUps[id] = queue
        return (lines, events, false)
    }

    /// The connection's writer reached a lag marker: the client reads again, so bring it back in step.
    func resyncLagged(subscription id: UInt64) {
        guard let subscription = subscriptions[id] else { return }
        subscription.outbox.clearLag(subscription: id)
        queueResync(subscription, reason: "lagged")
    }

    func unsubscribe(connection: UInt64, subscription id: UInt64) -> Bool {
        guard let subscription = subscriptions[id], subscription.connection == connection else { return false }
        subscriptions[id] = nil
        catchUps[id] = nil
        subscription.outbox.forget(subscription: id)
        publishStatus()
        return true
    }

    // MARK: - Connections

    func register(outbox: Outbox, credentials: PeerCredentials?, close: @escaping @Sendable () -> Void) -> UInt64 {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = ConnectionContext(id: id, outbox: outbox, credentials: credentials, close: close)
        if !lifecycle.permits(.acceptConnections) {
            // Too late to be served: say so and let the writer end the connection, so shutdown never waits on it.
            outbox.enqueue(line: SceneEngine.shutdownLine)
            outbox.close()
        }
        return id
    }

    func unregister(connection: UInt64) {
        connections[connection] = nil
        for (id, subscription) in subscriptions where subscription.connection == connection {
            subscriptions[id] = nil
            catchUps[id] = nil
        }
        publishStatus()
    }

    func setClientName(_ name: String?, connection: UInt64) {
        connections[connection]?.clientName = name
    }

    /// Shutdown: one `shutdown` event per connection, without subscription.
    func announceShutdown() {
        for connection in connections.values {
            connection.outbox.enqueue(line: SceneEngine.shutdownLine)
        }
    }

    static let shutdownLine = Array(#"{"event":"shutdown"}"#.utf8) + [UInt8(ascii: "\n")]

    func newOutbox() -> Outbox { Outbox(limits: limits, counters: counters) }
}

/// One pending catch-up: the store as it was when the catch-up was queued, and how far it has been written.
struct CatchUp {
    /// A copy of the store: copy-on-write, so it costs nothing until the live store next changes, and then one copy
    /// of the entry table (not of the scenes' elements, which are shared).
    let frozen: SceneStore
    var next = 0

    /// About how much one chunk holds before it is handed to the socket.
    static let chunkBytes = 64 * 1024
    /// How many scenes one engine turn looks at, so that a narrow pattern over many scenes cannot hold the engine.
    static let chunkScenes = 4096
}
