import SceneSyncCore

extension EngineCore {
    /// Serves a connection's requests in order and queues each answer, in this turn as far as it can: the changes
    /// of a pipelined burst reach the subscribers' queues before any of their writers runs, so each writer sends
    /// them together, and a change whose group commit needs no blocking step is answered before this returns.
    ///
    /// - Returns: how many requests were served, when that is settled in this turn: all of them, or fewer when the
    ///   connection's pending output reached `socket.max_pending_bytes` (§6), and the caller waits for room before
    ///   it hands over the rest. `nil` when a request has to wait (a group commit's blocking step, an app still
    ///   writing a scene's file, `sync`, a snapshot, a reload, figures read off the thread): `resume` is then
    ///   called once, on the engine's thread, with how many were served up to and including it, and the caller
    ///   hands over the rest again.
    ///
    /// A batch with a change is served at the end of the loop turn (see ``TurnEndBatches``): it returns `nil`.
    func serve(
        _ requests: ArraySlice<InboundRequest>, connection: UInt64, outbox: Outbox,
        resume: @escaping @Sendable (Int) -> Void
    ) -> Int? {
        guard !requests.contains(where: \.isSceneChange) else {
            serveAtTurnEnd(requests, connection: connection, outbox: outbox, resume: resume)
            return nil
        }
        return serveInOrder(requests, connection: connection, outbox: outbox, resume: resume)
    }

    /// ``serve(_:connection:outbox:resume:)`` once the batch may be decided now.
    func serveInOrder(
        _ requests: ArraySlice<InboundRequest>, connection: UInt64, outbox: Outbox,
        resume: @escaping @Sendable (Int) -> Void
    ) -> Int? {
        let start = ContinuousClock.now
        defer { metrics.timeTurn(since: start) }
        var served = 0
        var index = requests.startIndex
        while index < requests.endIndex {
            // A run of changes goes to one group commit (at most `changeGroupLimit`, so that the answers of one
            // group cannot overshoot the connection's pending-output bound by much).
            var end = index
            while end < requests.endIndex, end - index < Self.changeGroupLimit, requests[end].isSceneChange {
                end += 1
            }
            if end > index {
                let changes = requests[index..<end].compactMap { item -> Request? in
                    if case .request(let request) = item { return request }
                    return nil
                }
                let before = served
                guard serveChanges(changes, connection: connection, outbox: outbox, resume: { resume(before + $0) })
                else { return nil }
                served += end - index
                index = end
            } else {
                switch requests[index] {
                case .answer(let line):
                    outbox.enqueue(line: line)
                case .request(let request) where request.command.isAnsweredLater:
                    let through = served + 1
                    // After this call has returned `nil`, as promised, even when the answer needs no wait.
                    later { [self] in serveLater(request, connection: connection, outbox: outbox) { resume(through) } }
                    return nil
                case .request(let request):
                    if let response = serveNow(request, connection: connection) { outbox.enqueue(line: response) }
                }
                served += 1
                index += 1
            }
            if !outbox.hasRoom { break }
        }
        return served
    }

    static let changeGroupLimit = 64

    /// Serves consecutive changes of one connection: checks each and hands them to the group commit, whose answers
    /// come in the requests' order.
    ///
    /// - Returns: whether all of them were answered in this turn. Otherwise `resume` gets how many were served
    ///   once that is settled: all of them, or those before a change to a file an app still holds open for
    ///   writing, which then waits on its own (and counts as served once it was answered).
    private func serveChanges(
        _ requests: [Request], connection: UInt64, outbox: Outbox, resume: @escaping @Sendable (Int) -> Void
    ) -> Bool {
        var group: [ChangeRequest] = []
        drainWatcher()
        // Until a group is committed, what the watcher held was just taken: the commit need not take it again.
        var justDrained = true
        for (offset, request) in requests.enumerated() {
            guard let context = registry.connections[connection] else { break }
            guard case .change(let operation, let scene, let ifVersion) = request.command else { continue }
            let change = ChangeRequest(
                id: request.id, operation: operation, scene: scene, ifVersion: ifVersion,
                origin: Origin(
                    source: .client, client: context.clientName, uid: context.credentials?.uid,
                    pid: context.credentials?.pid),
                seenModified: store.scene(scene)?.modified)
            var refusal: SceneSyncError? = nil
            if !mayWrite(context.credentials) {
                refusal = Self.forbidden(context.credentials)
            } else if !lifecycle.permits(.acceptClientChanges) {
                refusal = SceneSyncError(.unavailable, "the daemon is shutting down")
            } else if sceneFiles.isOpen(scene) {
                // An app holds the file open: the changes before this one go first, then this one waits for the
                // close, on its own.
                guard submit(group, outbox: outbox, watcherJustDrained: justDrained, then: { resume(offset) }) else {
                    return false
                }
                later { [self] in serveOnceClosed(change, outbox: outbox) { resume(offset + 1) } }
                return false
            }
            if let refusal {
                // Its answer comes after those of the changes before it.
                guard submit(group, outbox: outbox, watcherJustDrained: justDrained, then: { resume(offset) }) else {
                    return false
                }
                if !group.isEmpty { justDrained = false }
                group = []
                outbox.enqueue(line: ResponseWriter.error(id: request.id, refusal))
                continue
            }
            group.append(change)
        }
        guard submit(group, outbox: outbox, watcherJustDrained: justDrained, then: { resume(requests.count) }) else {
            return false
        }
        publishStatus()
        return true
    }

    /// A change to a file an app holds open for writing: waits for the close (at most `scenes.write_wait_ms`),
    /// then commits it alone, or refuses it; then calls `done`.
    private func serveOnceClosed(_ change: ChangeRequest, outbox: Outbox, then done: @escaping () -> Void) {
        let answered = { [self] in
            publishStatus()
            done()
        }
        waitForWriter(change.scene) { [self] free in
            guard free else {
                outbox.enqueue(line: ResponseWriter.error(id: change.id, stillOpenError(change.scene)))
                return answered()
            }
            if submit([change], outbox: outbox, then: answered) { answered() }
        }
    }

    /// Queues a group for its commit.
    ///
    /// - Returns: whether it was answered in this turn already (its commit needed no blocking step); otherwise
    ///   `then` runs once it is.
    func submit(
        _ requests: [ChangeRequest], outbox: Outbox, watcherJustDrained: Bool = false, then: @escaping () -> Void
    ) -> Bool {
        guard !requests.isEmpty else { return true }
        var inThisTurn = true
        var answered = false
        let group = ChangeGroup(requests: requests, outbox: outbox) {
            if inThisTurn { answered = true } else { then() }
        }
        run(pipeline.enqueue(group: group), watcherJustDrained: watcherJustDrained)
        inThisTurn = false
        return answered
    }
}

extension InboundRequest {
    /// A `set`, `push`, `pop` or `delete`: served by the group commit.
    var isSceneChange: Bool {
        guard case .request(let request) = self, case .change = request.command else { return false }
        return true
    }
}

extension Command {
    /// Whether the answer has to wait for something off the engine's thread, or for the watcher: served by a task
    /// of its own, in order.
    var isAnsweredLater: Bool {
        switch self {
        case .sync, .phase, .snapshot, .reload, .stats, .metrics: true
        case .hello, .list, .get, .change, .subscribe, .unsubscribe, .history: false
        }
    }
}
