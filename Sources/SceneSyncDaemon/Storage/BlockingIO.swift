import NIOCore
import NIOPosix
import SceneSyncCore

/// The one executor for every blocking call of the daemon: scene-file reads, writes and renames, directory
/// listings, the sync cookies, the revision high-water mark, snapshots and the clean-shutdown marker, and, with
/// replication, the cluster journal's writes, flushes and reads (the replicator reaches it through
/// ``Engine/blockingIO``).
///
/// The engine runs on one event loop (``EngineLoop``) with every connection: an `fsync`, a `rename` or a slow disk
/// there would stall every client and subscriber. These threads are neither the loop's nor Swift's cooperative
/// pool's. There are a few of them, so that a snapshot being written, or the next revision block being reserved
/// ahead, never holds up the pipeline's file work; the engine goes on with each of its own steps only in that
/// step's completion (``submit(_:completingOn:then:)``), so their order is its own.
package final class BlockingIO: Sendable {
    /// The engine's pipeline step, a snapshot, and a reservation or a sync cookie can each run at once, and so can
    /// the cluster journal's three jobs (its writer, its flush, a push's read-back): a slow disk under the journal
    /// never leaves the engine's file work without a thread.
    static let threads = 6

    private let executor: Executor
    /// A test's full disk: asked before each scene-file write, it names the `errno` to fail that write with, or
    /// `nil` to let it happen. Always `nil` in the daemon; a seeded schedule cannot fill a real disk for one file.
    let sceneWriteFault: (@Sendable (SceneID) -> Int32?)?

    /// Where the jobs run.
    private enum Executor {
        /// The daemon's threads.
        case pool(NIOThreadPool)
        /// A test's schedule, which takes each job of ``submit(_:completingOn:then:)`` (see ``BlockingJob``).
        case handOff(@Sendable (BlockingJob) -> Void)
    }

    init() {
        let pool = NIOThreadPool(numberOfThreads: Self.threads)
        pool.start()
        executor = .pool(pool)
        sceneWriteFault = nil
    }

    /// With no threads: every job of ``submit(_:completingOn:then:)`` goes to `handOff`, whose owner (a test's
    /// schedule) runs it and delivers its completion when it chooses, in the orders threads could produce. Jobs of
    /// ``run(_:)`` run at once, on the caller's thread. `failingSceneWrites` is ``sceneWriteFault``.
    init(
        handingJobsTo handOff: @escaping @Sendable (BlockingJob) -> Void,
        failingSceneWrites: (@Sendable (SceneID) -> Int32?)? = nil
    ) {
        executor = .handOff(handOff)
        sceneWriteFault = failingSceneWrites
    }

    /// Its threads end with the engine that owns it: jobs already queued still run.
    deinit {
        if case .pool(let pool) = executor { pool.shutdownGracefully { _ in } }
    }

    /// Runs `job` on one of the executor's threads and resumes the caller with its result, leaving the caller's
    /// executor free meanwhile.
    package func run<Result: Sendable>(_ job: @escaping @Sendable () -> Result) async -> Result {
        guard case .pool(let pool) = executor else { return job() }
        return await withCheckedContinuation { continuation in
            // A pool that is already shut down hands the job back as cancelled on this thread: it still runs, since
            // a scene file or a mark not written would be lost, and that happens only once the engine is gone.
            pool.submit { _ in continuation.resume(returning: job()) }
        }
    }

    /// Runs `job` on one of the executor's threads, then `completion` with its result on `loop`, as a job of the
    /// loop's own: the engine's way of waiting for a blocking call without a task, its completion being one more
    /// input of the thread that owns the engine's state.
    func submit<Result: Sendable>(
        _ job: @escaping @Sendable () -> Result, completingOn loop: any EventLoop,
        then completion: @escaping @Sendable (Result) -> Void
    ) {
        switch executor {
        case .pool(let pool):
            // As for ``run(_:)``: a pool already shut down still runs the job, on this thread.
            pool.submit { _ in
                let result = job()
                loop.execute { completion(result) }
            }
        case .handOff(let handOff):
            handOff(
                BlockingJob {
                    let result = job()
                    return { loop.execute { completion(result) } }
                })
        }
    }

    /// Runs `job` for every index of `0..<count`, spread over all of the executor's threads, and returns the
    /// results in index order: for batches of independent calls, such as reading every scene file at start.
    func runOnEveryThread<Result: Sendable>(
        count: Int, _ job: @escaping @Sendable (Int) -> Result
    ) async -> [Result] {
        let workers = max(1, min(Self.threads, count))
        return await withTaskGroup(of: (Int, [Result]).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    await self.run {
                        var results: [Result] = []
                        results.reserveCapacity(count / workers + 1)
                        for index in stride(from: worker, to: count, by: workers) { results.append(job(index)) }
                        return (worker, results)
                    }
                }
            }
            var byWorker = [[Result]](repeating: [], count: workers)
            for await (worker, results) in group { byWorker[worker] = results }
            var ordered: [Result] = []
            ordered.reserveCapacity(count)
            for index in 0..<count { ordered.append(byWorker[index % workers][index / workers]) }
            return ordered
        }
    }
}
