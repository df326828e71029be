import NIOCore

/// How the engine waits for what is not on its thread: no task of its own, but a completion that comes back to the
/// loop as one more input (a blocking call's result, a timer, an async call outside the engine), and the work in
/// flight meanwhile counted in ``InFlightWork``.
extension SceneEngine {
    /// Runs `job` on the blocking executor; `completion` gets its result on the engine's thread, in a job of the
    /// loop's own.
    func offload<Result: Sendable>(
        _ job: @escaping @Sendable () -> Result, then completion: @escaping (Result) -> Void
    ) {
        inFlight.begin()
        // Bound to the loop: the completion reads and changes the engine's state, and runs only there.
        let completion = NIOLoopBound(completion, eventLoop: loop.eventLoop)
        io.submit(job, completingOn: loop.eventLoop) { result in
            self.assumeIsolated { engine in
                completion.value(result)
                engine.finishedInFlight()
            }
        }
    }

    /// Runs `work`, which is async and not the engine's (the cluster journal's write, a reload), in a task on the
    /// engine's loop; `completion` gets its result on the engine's thread.
    func awaitOutside<Result: Sendable>(
        _ work: @escaping @Sendable () async -> Result, then completion: @escaping (Result) -> Void
    ) {
        inFlight.begin()
        let completion = NIOLoopBound(completion, eventLoop: loop.eventLoop)
        let eventLoop = loop.eventLoop
        Task(executorPreference: loop.taskExecutor) {
            let result = await work()
            eventLoop.execute {
                self.assumeIsolated { engine in
                    completion.value(result)
                    engine.finishedInFlight()
                }
            }
        }
    }

    /// Runs `body` on the engine's thread at `deadline`, or at once if it has passed. A timer is not work in flight:
    /// what waits for one is ended at shutdown by ``quiesce()``.
    func schedule(at deadline: ContinuousClock.Instant, _ body: @escaping () -> Void) {
        let body = NIOLoopBound(body, eventLoop: loop.eventLoop)
        let (seconds, attoseconds) = max(.zero, deadline - .now).components
        let delay = TimeAmount.nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        loop.eventLoop.scheduleTask(in: delay) {
            self.assumeIsolated { _ in body.value() }
        }
    }

    /// Runs `body` on the engine's thread in a job of its own, after what runs now: a waiter freed in the middle
    /// of a step (a `sync` answered, a writer closed) goes on after that step, never inside it.
    func later(_ body: @escaping () -> Void) {
        let body = NIOLoopBound(body, eventLoop: loop.eventLoop)
        loop.eventLoop.execute {
            self.assumeIsolated { _ in body.value() }
        }
    }

    private func finishedInFlight() {
        for waiter in inFlight.end() { waiter.succeed() }
    }

    /// Waits until none of the engine's work is off its thread: the daemon's last wait for the engine, once its
    /// services stopped. A client change that still waits for an app to close its file waits no longer (it is
    /// refused: nothing is accepted any more).
    public func quiesce() async {
        for waiter in sceneFiles.closeAll() { later(waiter) }
        let idle = loop.eventLoop.makePromise(of: Void.self)
        if !inFlight.whenIdle(idle) { idle.succeed() }
        await idle.futureResult.outcome()
    }

    /// Waits, in an async caller, for a step that reports with a completion.
    func completion<Result: Sendable>(of step: (@escaping (Result) -> Void) -> Void) async -> Result {
        let done = loop.eventLoop.makePromise(of: Result.self)
        step { done.succeed($0) }
        return await done.futureResult.outcome()
    }

    /// ``completion(of:)`` for a step that reports nothing but its end.
    func completion(of step: (@escaping () -> Void) -> Void) async {
        let done = loop.eventLoop.makePromise(of: Void.self)
        step { done.succeed() }
        await done.futureResult.outcome()
    }
}
