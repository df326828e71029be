import SceneSyncCore

/// Everything a ``ScenePath`` keeps under its lock: a value with no I/O and no tasks, so that every transition can
/// be tested on its own. The methods return what must happen outside the lock (emissions to listeners, whether
/// observers must hear of a change of ``shown``).
struct MirrorState<Route: Sendable> {
    var confirmed = ConfirmedScene<Route>()
    /// What ``ScenePath/routes`` shows: the confirmed routes, or a value set through the binding not yet written.
    var shown: [Route] = []
    var binding = Binding()
    var writes = WritesInFlight()
    var catchUp = CatchUp()
    var readiness = Readiness()
    var flushWaiters: [CheckedContinuation<Void, Never>] = []
    var listeners = Listeners()
    var finished = false
    /// The scene's last reported phase as it was when the mirror opened: taken from the `state` events before the
    /// first `synced`, never changed after.
    var lastPhase: ScenePhase?
    var outage = Outage()

    /// The outcome of an input: emissions to deliver and whether ``shown`` changed.
    struct Outcome {
        var emissions: [MirrorEmission<Route>] = []
        var shownChanged = false
        var listeners: [MirrorListener<Route>] = []
        /// Tasks waiting for every write to end, to resume now.
        var flushed: [CheckedContinuation<Void, Never>] = []
    }

    // MARK: - The daemon's events

    /// A `state` event: the scene is exactly this now.
    mutating func receive(state scene: SceneState, decoded: DecodedRoutes<Route>) -> Outcome {
        catchUp.sawState = true
        if !readiness.ready { lastPhase = scene.phase }
        // The state's epoch comes with the `synced` that ends the catch-up.
        return take(
            elements: scene.path, decoded: decoded, version: scene.version, format: scene.format, clock: nil,
            exists: true, force: true)
    }

    /// A `change` event, held while this mirror's writes are in flight.
    mutating func receive(change record: ChangeRecord, decoded: DecodedRoutes<Route>) -> Outcome {
        if writes.hold(record, decoded: decoded) { return Outcome() }
        return apply(change: record, decoded: decoded)
    }

    /// A `resync`: what follows until `synced` is the whole state.
    mutating func receiveResync() {
        catchUp = CatchUp()
        // Held changes belong to the view the resync replaces (perhaps another epoch): the states that follow say
        // what is current.
        writes.held = []
        writes.synced = nil
    }

    /// `synced`: the view is complete at `clock`. Returns the waiter of ``SceneSyncSession/path(_:as:)`` to resume.
    mutating func receive(synced clock: Clock) -> (Outcome, CheckedContinuation<Void, any Error>?, (any Error)?) {
        var outcome = Outcome()
        if catchUp.running, !catchUp.sawState {
            if !readiness.ready { lastPhase = nil }
            // No `state` since the resync: the scene does not exist (any more).
            outcome = take(
                elements: [], decoded: .empty, version: 0, format: confirmed.format, clock: clock, exists: false,
                force: true)
        }
        // Every change up to `clock` is in the view now, but for those held back while this mirror's writes are in
        // flight (see ``WritesInFlight/stopShort(of:confirmed:)``); later ones are newer than anything it wrote.
        confirmed.clock = writes.stopShort(of: clock, confirmed: confirmed.clock)
        catchUp.running = false
        guard !readiness.ready else { return (outcome, nil, nil) }
        readiness.ready = true
        // Nothing is reported before the mirror is handed out: the first value is its initial state.
        outcome.emissions = []
        return (outcome, readiness.takeWaiter(), readiness.initialFailure)
    }

    private mutating func apply(
        change record: ChangeRecord, decoded: DecodedRoutes<Route>
    )
        -> Outcome
    {
        if confirmed.covers(record.clock) { return Outcome() }
        switch record.kind {
        case .delete:
            return take(
                elements: [], decoded: .empty, version: 0, format: record.format, clock: record.clock,
                exists: false, force: false)
        case .set:
            return take(
                elements: record.path ?? [], decoded: decoded, version: record.version, format: record.format,
                clock: record.clock, exists: true, force: false)
        }
    }

    /// Takes in the scene as another writer left it.
    private mutating func take(
        elements: [Element], decoded: DecodedRoutes<Route>, version: UInt64, format: SceneFormat?,
        clock: Clock?, exists: Bool, force: Bool
    ) -> Outcome {
        var outcome = Outcome()
        let changed = elements != confirmed.elements || exists != confirmed.exists
        confirmed.elements = elements
        confirmed.version = version
        confirmed.format = format
        confirmed.exists = exists
        if let clock { confirmed.clock = clock }
        if confirmed.take(decoded) {
            if binding.idle {
                shown = confirmed.routes
                outcome.shownChanged = changed || force
            }
            if changed, readiness.ready { outcome.emissions.append(.routes(confirmed.routes)) }
        } else if let failure = decoded.failure {
            // `.fail`: the routes keep their last good value, and the failure is news (or fails the opening).
            if readiness.ready {
                outcome.emissions.append(.failure(failure))
            } else {
                readiness.initialFailure = failure
            }
        }
        outcome.listeners = listeners.all
        return outcome
    }

    // MARK: - This mirror's writes

    /// A write starts: changes now wait until it is answered. Throws when the scene holds a foreign element.
    mutating func beginWrite() throws(SceneSyncClientError) -> ConfirmedScene<Route> {
        if let undecodable = confirmed.undecodable { throw undecodable }
        writes.count += 1
        return confirmed
    }

    /// A `conflict` or a re-read told the scene as it is: it becomes the base of the next attempt, and other
    /// writers' change is reported.
    ///
    /// Returns the base for the next attempt: always the scene as the daemon told it, since that is what the next
    /// compare-and-set is checked against (versions restart at 1 when a scene is deleted and created again). The
    /// mirror itself takes it in only when it is newer than what the mirror holds, by revision: a change event may
    /// have overtaken the answer.
    mutating func adopt(
        _ scene: SceneState?, decoded: DecodedRoutes<Route>
    )
        -> (Outcome, ConfirmedScene<Route>)
    {
        var base = confirmed
        base.elements = scene?.path ?? []
        base.version = scene?.version ?? 0
        base.format = scene?.format ?? confirmed.format
        base.exists = scene != nil
        _ = base.take(decoded)
        if let scene, let clock = confirmed.clock, scene.modified <= clock.revision { return (Outcome(), base) }
        let outcome = take(
            elements: base.elements, decoded: decoded, version: base.version, format: base.format,
            clock: scene.flatMap { scene in confirmed.clock.map { Clock(epoch: $0.epoch, revision: scene.modified) } },
            exists: base.exists, force: false)
        return (outcome, base)
    }

    /// A write ended; `committed` is the scene it made, if it succeeded. Held changes are taken in once no write
    /// is in flight: those the write already covers were its own.
    mutating func endWrite(committed: ConfirmedScene<Route>?) -> Outcome {
        writes.count -= 1
        var outcome = Outcome()
        if let committed {
            let newer = committed.clock.map { !confirmed.covers($0) } ?? true
            if newer {
                confirmed = committed
                if binding.idle {
                    shown = committed.routes
                    outcome.shownChanged = true
                }
            }
        }
        for (record, decoded) in writes.release() {
            let step = apply(change: record, decoded: decoded)
            outcome.emissions += step.emissions
            outcome.shownChanged = outcome.shownChanged || step.shownChanged
        }
        // The held changes are in: the view is complete where the `synced` that came while they were held said.
        if let synced = writes.releaseSynced(), let own = confirmed.clock, own.epoch == synced.epoch {
            confirmed.clock = own.movedOn(to: synced)
        }
        outcome.listeners = listeners.all
        if !hasPendingWrites {
            outcome.flushed = flushWaiters
            flushWaiters = []
        }
        return outcome
    }

    /// Whether a flush must wait: a write is in flight, or a value set through the binding is not written yet.
    var hasPendingWrites: Bool { !binding.idle || writes.count > 0 }

    // MARK: - Listeners

    mutating func add(_ listener: MirrorListener<Route>) -> UInt64? {
        guard !finished else { return nil }
        return listeners.add(listener)
    }

    /// The mirror stopped: every listener ends. Returns them, to be finished outside the lock.
    mutating func finish() -> ([MirrorListener<Route>], CheckedContinuation<Void, any Error>?) {
        finished = true
        return (listeners.removeAll(), readiness.takeWaiter())
    }
}
