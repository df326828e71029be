import Observation
import SceneSyncCore

extension ScenePath {
    /// Starts following the scene and returns once its current state is known. Throws when an element of the
    /// scene is not a `Route`, or when the daemon refuses the subscription.
    func startMirroring() async throws {
        let subscription = ResilientSubscription(
            socketPath: session.socketPath, patterns: [scene.rawValue], clientName: session.clientName,
            backoff: session.link.backoff)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled (or closed) before it started: no subscription at all.
                let proceed = state.withLock { state -> Bool in
                    guard !state.finished, !Task.isCancelled else { return false }
                    state.readiness.waiter = continuation
                    return true
                }
                guard proceed else {
                    continuation.resume(throwing: CancellationError())
                    return
                }
                // Weak, so that a mirror the app let go of ends (its deinit cancels this task).
                let task = Task { [weak self] in
                    var failure: (any Error)? = nil
                    do {
                        for try await event in subscription {
                            guard let self else { return }
                            self.receive(event)
                        }
                    } catch {
                        failure = error
                    }
                    self?.endMirroring(failure: failure)
                }
                mirror.withLock { $0 = task }
                if state.withLock({ $0.finished }) { task.cancel() }
            }
        } onCancel: {
            stopMirroring()
        }
    }

    /// The subscription ended (the mirror was closed, or the daemon refused the subscription itself): a waiting
    /// ``SceneSyncSession/path(_:as:)`` fails, and listeners finish after hearing the daemon's error, if any.
    private func endMirroring(failure: (any Error)?) {
        let (listeners, waiter) = state.withLock { $0.finish() }
        session.forget(scene.rawValue, self)
        waiter?.resume(throwing: failure ?? CancellationError())
        // A subscription the daemon refused for good: the app hears why before the sequences finish.
        if let failure {
            let reported =
                failure as? SceneSyncClientError
                ?? SceneSyncClientError(.closed, "\(scene) stopped following the daemon: \(failure)")
            for listener in listeners { listener.deliver(.failure(reported)) }
        }
        for listener in listeners { listener.finish() }
    }

    private func receive(_ event: SceneSyncEvent) {
        switch event {
        case .state(let scene):
            let decoded = decode(scene.path)
            publish(state.withLock { $0.receive(state: scene, decoded: decoded) })
        case .change(let record):
            let decoded = record.path.map(decode) ?? .empty
            publish(state.withLock { $0.receive(change: record, decoded: decoded) })
        case .resync:
            state.withLock { $0.receiveResync() }
        case .disconnected(let reason):
            watchOutage(reason: reason)
        case .reconnected:
            state.withLock { $0.outage.end() }
        case .synced(let clock):
            let (outcome, waiter, failure) = state.withLock { $0.receive(synced: clock) }
            publish(outcome)
            if let waiter {
                if let failure { waiter.resume(throwing: failure) } else { waiter.resume() }
            }
        case .phase, .snapshot, .warning, .heartbeat, .shutdown, .unknown:
            break
        }
    }

    func decode(_ path: [Element]) -> DecodedRoutes<Route> {
        coding.decode(path, policy: undecodable)
    }

    /// The connection dropped: the subscription reconnects by itself, and if the daemon stays away past the
    /// session's deadline the app hears of it once on ``failures`` (its writes would fail by then too).
    private func watchOutage(reason: String) {
        let generation = state.withLock { $0.outage.begin() }
        let timeout = session.requestTimeout
        let socketPath = session.socketPath
        let scene = self.scene
        Task { [weak self] in
            try? await Task.sleep(for: timeout)
            let failure = SceneSyncClientError(
                .timedOut,
                "no daemon at \(socketPath) for \(timeout) (\(reason)); \(scene) follows it again once it is back")
            guard let self else { return }
            self.publish(self.state.withLock { $0.outageOutlasted(generation, failure: failure) })
        }
    }

    /// Tells observers and listeners what an input changed; never under the lock, since both may read the mirror.
    func publish(_ outcome: MirrorState<Route>.Outcome) {
        if outcome.shownChanged {
            registrar.willSet(self, keyPath: \.routes)
            registrar.didSet(self, keyPath: \.routes)
        }
        for emission in outcome.emissions {
            for listener in outcome.listeners { listener.deliver(emission) }
        }
        for waiter in outcome.flushed { waiter.resume() }
    }
}
