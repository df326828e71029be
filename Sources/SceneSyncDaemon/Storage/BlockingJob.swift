/// One blocking job of the engine as a test's executor gets it (``BlockingIO/init(handingJobsTo:)``), in two halves
/// that a thread pool runs back to back: the blocking call, and, returned by it, the delivery of its completion to
/// the engine's loop. A seeded schedule runs the halves at moments of its choice (jobs in any order, an app's write
/// between a job and its delivery), which is every interleaving the pool's threads could make, one at a time.
package struct BlockingJob: Sendable {
    /// Performs the blocking call; the closure it returns queues the completion on the engine's loop.
    package let run: @Sendable () -> @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> @Sendable () -> Void) {
        self.run = run
    }
}
