import NIOCore

/// How the engine waits for what is not on its thread: never by blocking and never in a task of its own, but with
/// a completion that comes back to the loop as one more input (``EngineInput/workDone(_:)``,
/// ``EngineInput/timerFired(_:)``, ``EngineInput/resumed(_:)``), and the work in flight meanwhile counted in
/// ``InFlightWork``.
extension EngineCore {
    /// Runs `job` on the blocking executor; `completion` gets its result on the engine's thread, handed back as
    /// ``EngineInput/workDone(_:)``.
    func offload<Result: Sendable>(
        _ job: @escaping @Sendable () -> Result, then completion: @escaping (Result) -> Void
    ) {
        // Bound to the loop: the completion reads and changes the engine's state, and runs only there.
        let completion = NIOLoopBound(completion, eventLoop: loop.eventLoop)
        offload(job, reporting: { result in .workDone { completion.value(result) } })
    }

    /// Runs `job` on the blocking executor; its result comes back to the engine's thread as the input `report`
    /// makes of it (one of the typed completions of ``EngineInput``).
    func offload<Result: Sendable>(
        _ job: @escaping @Sendable () -> Result, reporting report: @escaping @Sendable (Result) -> EngineInput
    ) {
        inFlight.begin()
        let core = NIOLoopBound(self, eventLoop: loop.eventLoop)
        io.submit(job, completingOn: loop.eventLoop) { result in core.value.handle(report(result)) }
    }

    /// Runs `work`, which is async and not the engine's (the cluster journal's write, a reload), in a task on the
    /// engine's loop; `completion` gets its result on the engine's thread, handed back as
    /// ``EngineInput/workDone(_:)``.
    func awaitOutside<Result: Sendable>(
        _ work: @escaping @Sendable () async -> Result, then completion: @escaping (Result) -> Void
    ) {
        let completion = NIOLoopBound(completion, eventLoop: loop.eventLoop)
        awaitOutside(work, reporting: { result in .workDone { completion.value(result) } })
    }

    /// Runs `work` like ``awaitOutside(_:then:)``; its result comes back as the input `report` makes of it.
    func awaitOutside<Result: Sendable>(
        _ work: @escaping @Sendable () async -> Result, reporting report: @escaping @Sendable (Result) -> EngineInput
    ) {
        inFlight.begin()
        let core = NIOLoopBound(self, eventLoop: loop.eventLoop)
        let eventLoop = loop.eventLoop
        Task(executorPreference: loop.taskExecutor) {
            let result = await work()
            eventLoop.execute { core.value.handle(report(result)) }
        }
    }

    /// Runs `body` on the engine's thread at `deadline` (at once if it has passed), as
    /// ``EngineInput/timerFired(_:)``. A timer is not work in flight: what waits for one is ended at shutdown by
    /// ``quiesce(then:)``.
    func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping () -> Void) {
        let core = NIOLoopBound(self, eventLoop: loop.eventLoop)
        let body = NIOLoopBound(body, eventLoop: loop.eventLoop)
        let (seconds, attoseconds) = max(.zero, deadline - .now).components
        let delay = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        loop.eventLoop.scheduleTask(in: delay) { core.value.handle(.timerFired(body.value)) }
    }

    /// Runs `body` on the engine's thread in a job of its own, after what runs now, as ``EngineInput/resumed(_:)``:
    /// a waiter freed in the middle of a step (a `sync` answered, a writer closed) goes on after that step, never
    /// inside it.
    func later(_ body: @escaping () -> Void) {
        let core = NIOLoopBound(self, eventLoop: loop.eventLoop)
        let body = NIOLoopBound(body, eventLoop: loop.eventLoop)
        loop.eventLoop.execute { core.value.handle(.resumed(body.value)) }
    }

    /// Work off the thread reported back (``EngineInput/workDone(_:)``): its completion goes on, and whoever waits
    /// for no work to be in flight goes on once none is.
    func workDone(_ completion: () -> Void) {
        completion()
        endWork()
    }

    /// One piece of work off the thread reported back, its input handled: whoever waits for no work to be in
    /// flight goes on once none is.
    func endWork() {
        for waiter in inFlight.end() { waiter() }
    }

    /// Calls `done` once none of the engine's work is off its thread: the daemon's last wait for the engine, once
    /// its services stopped. A client change that still waits for an app to close its file waits no longer (it is
    /// refused: nothing is accepted any more).
    func quiesce(then done: @escaping () -> Void) {
        for waiter in sceneFiles.closeAll() { later(waiter) }
        if !inFlight.whenIdle(done) { done() }
    }
}
