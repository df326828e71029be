import Synchronization

/// The owner of every task the engine starts: the pipeline's runner, snapshot writes, revision reservations, the
/// delayed status line and writer-wait deadlines.
///
/// Each runs as a child of ``run()``, which the daemon runs beside its services, so no engine task outlives the
/// daemon and keeps the engine (with its state-directory lock and threads) alive after it stopped. The jobs not
/// started yet are bounded by what spawns them: one pipeline runner, one snapshot writer and one reservation at a
/// time, one status flush, and one deadline per client change that waits for an app's file.
final class EngineTasks: Sendable {
    typealias Job = @Sendable () async -> Void

    private struct State {
        var queued: [Job] = []
        /// ``run()`` waiting for jobs.
        var waiter: CheckedContinuation<[Job]?, Never>? = nil
        var finished = false
    }
    private let state = Mutex(State())

    /// Starts `job` as a child of ``run()``: at once while it runs, or as soon as it starts.
    func spawn(_ job: @escaping Job) {
        let (waiter, late) = state.withLock { state -> (CheckedContinuation<[Job]?, Never>?, Bool) in
            guard !state.finished else { return (nil, true) }
            guard let waiter = state.waiter else {
                state.queued.append(job)
                return (nil, false)
            }
            state.waiter = nil
            return (waiter, false)
        }
        waiter?.resume(returning: [job])
        // Only once the daemon is done: an engine call made that late still completes, so no caller waits forever
        // for a job that never ran.
        if late { Task { await job() } }
    }

    /// Runs every job spawned, until ``finish()``, also when the calling task is cancelled: the engine's shutdown
    /// (its final snapshot) still needs them then. Jobs still running at the end are cancelled (those that only
    /// wait for a deadline act at once) and awaited.
    func run() async {
        await withDiscardingTaskGroup { group in
            while let jobs = await next() {
                for job in jobs { group.addTask { await job() } }
            }
            group.cancelAll()
        }
    }

    /// The jobs queued, waiting for one if there is none; `nil` once finished. Not cancellable, on purpose.
    private func next() async -> [Job]? {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> [Job]?? in
                if !state.queued.isEmpty {
                    defer { state.queued = [] }
                    return .some(state.queued)
                }
                if state.finished { return .some(nil) }
                precondition(state.waiter == nil, "the engine's tasks have one runner")
                state.waiter = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Ends ``run()`` once the jobs it started have ended.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<[Job]?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }
}
