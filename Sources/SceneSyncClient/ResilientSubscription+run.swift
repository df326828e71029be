import SceneSyncCore

extension ResilientSubscription {
    /// The connection loop behind one iteration: connect, subscribe from the resume point, forward events; on any
    /// loss report it once, wait, and do it again. Runs until cancelled or a final error.
    func run(delivering output: AsyncThrowingStream<ReceivedEvent, any Error>.Continuation) async {
        var tracker = ResumeTracker(since: since)
        var attempt = 0
        var connectedBefore = false
        var outage = false
        // The daemon process that announced `shutdown`: it may still accept connections while it stops, and a
        // subscription there would only hold up its exit and be cut again.
        var stopping: (pid: Int32, since: ContinuousClock.Instant)? = nil
        var currentPID: Int32 = 0
        var consumerBehind = false
        /// Hands an event to the consumer; throws ``ConsumerBehind`` when its queue is full, so that the connection
        /// ends and a later one resumes after the last event it took.
        func deliver(_ received: ReceivedEvent) throws(ConsumerBehind) {
            guard case .enqueued = output.yield(received) else {
                consumerBehind = true
                throw ConsumerBehind()
            }
            consumerBehind = false
            tracker.observe(received.event)
            if case .shutdown = received.event { stopping = (currentPID, .now) }
        }
        func deliver(_ event: SceneSyncEvent) throws(ConsumerBehind) {
            try deliver(ReceivedEvent(event: event, json: event.clientSideJSON))
        }

        while !Task.isCancelled {
            var reason = "the connection ended"
            do {
                try await SceneSyncConnection.withConnection(to: socketPath) { connection in
                    let server = try await connection.hello(client: clientName)
                    if let stopping, stopping.pid == server.pid, ContinuousClock.now - stopping.since < Self.stopGrace {
                        throw StillStopping()
                    }
                    stopping = nil
                    currentPID = server.pid
                    let resumeFrom = tracker.resumePoint
                    // Starting over after the consumer saw part of a view: it needs the whole state again.
                    let startingOver = resumeFrom == nil && tracker.deliveredAnything
                    let subscription = try await connection.subscribe(
                        patterns: patterns, since: resumeFrom, initial: startingOver || initial)
                    // A consumer that fell behind reconnects with growing waits, not at once, until it keeps up.
                    if !consumerBehind { attempt = 0 }
                    var events = subscription.received.makeAsyncIterator()
                    if connectedBefore {
                        outage = false
                        if let resumeFrom {
                            // Whether the daemon could resume shows in its first event.
                            guard let first = try await events.next() else { return }
                            if case .resync = first.event {
                                try deliver(.reconnected(resumedAt: nil))
                            } else {
                                try deliver(.reconnected(resumedAt: resumeFrom))
                            }
                            try deliver(first)
                        } else {
                            try deliver(.reconnected(resumedAt: nil))
                            if startingOver { try deliver(.resync(.interrupted)) }
                        }
                    } else if startingOver {
                        try deliver(.resync(.interrupted))
                    }
                    connectedBefore = true
                    while let received = try await events.next() { try deliver(received) }
                }
            } catch is CancellationError {
                break
            } catch is StillStopping {
                reason = "the daemon is shutting down"
            } catch is ConsumerBehind {
                reason = "the consumer fell \(maxBufferedEvents) events behind"
            } catch let error as SceneSyncError {
                // The daemon refused the subscription itself; only "too many clients" may pass.
                guard error.code == .unavailable else {
                    output.finish(throwing: error)
                    return
                }
                reason = "\(error.code.rawValue): \(error.message)"
            } catch let error as SceneSyncConnectionError {
                if !connectedBefore, !waitsForDaemon {
                    output.finish(throwing: error)
                    return
                }
                if case .disconnected(let why) = error { reason = why } else { reason = error.description }
            } catch {
                reason = "\(error)"
            }
            if Task.isCancelled { break }
            if connectedBefore, !outage {
                // Failing only when the consumer's queue is still full: it then learns of the outage from
                // `reconnected`, and `outage` stays false so that the next loss tries again.
                outage = (try? deliver(.disconnected(reason: reason))) != nil
            }
            do {
                try await Task.sleep(for: backoff.delay(attempt: attempt))
            } catch {
                break
            }
            attempt += 1
        }
        output.finish()
    }

    /// How long a daemon that announced `shutdown` is not reconnected to. Bounded, so that a new daemon that happens
    /// to get the old one's process ID is not shunned for ever.
    static var stopGrace: Duration { .seconds(30) }

    /// The daemon answering is the one that announced its shutdown.
    private struct StillStopping: Error {}

    /// The consumer's queue is full.
    struct ConsumerBehind: Error {}
}
