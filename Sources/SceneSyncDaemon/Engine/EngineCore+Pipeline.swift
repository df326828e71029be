import SceneSyncCore

extension EngineCore {
    /// Starts the pipeline when an input found it idle. `watcherJustDrained`: the caller took the watcher's events
    /// a moment ago, on this thread, with nothing waited for since, so the first step need not take them again.
    func run(_ start: Pipeline.Start, watcherJustDrained: Bool = false) {
        guard start == .start else { return }
        runPipelineSteps(watcherJustDrained: watcherJustDrained)
    }

    /// The disk work of the engine, one step at a time (``PipelineMachine`` says which): file events (read, then
    /// merged here), other hosts' batches and group commits, while the engine itself stays free to serve reads,
    /// subscriptions and fan-out.
    ///
    /// Runs on the engine's thread until a step has to wait for something off it (a big file step, a revision
    /// reservation, the cluster journal) or nothing is left; that step's completion, back on the loop, calls it
    /// again. A batch of file
    /// events or a group commit whose files are few and whose revisions are reserved ahead, the common case, is
    /// merged, or runs to its answers, in the turn that queued it, with no task between.
    func runPipelineSteps(watcherJustDrained: Bool = false) {
        var drained = watcherJustDrained
        while true {
            // File events the kernel holds go before any other step: take them before choosing the next one
            // (with nothing else queued there is no choice to make, and the loop hands over what comes later).
            if !drained, pipeline.queuedCount > 0 { drainWatcher() }
            drained = false
            switch pipeline.next() {
            case .perform(.mergeFiles(let events)):
                guard mergeNow(events) else {
                    process(events) { [self] in runPipelineSteps() }
                    return
                }
            case .perform(.applyRemote(let remote)):
                performRemote(remote.changes) { [self] outcomes in
                    remote.done(outcomes)
                    runPipelineSteps()
                }
                return
            case .perform(.commit(let groups)):
                guard startCommit(groups) else { return }
            case .idle(let waiters):
                for waiter in waiters { later(waiter) }
                publishStatus()
                return
            }
        }
    }

    /// Calls `done` once every file event taken and every change queued so far is done.
    func settle(then done: @escaping () -> Void) {
        if pipeline.settle(done) { done() }
    }
}
