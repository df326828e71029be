import NIOCore

/// Connections' batches that hold a change, kept for the end of the loop turn that read them.
///
/// Deciding a change first takes everything the kernel holds for the inotify descriptor (§3: never decide on, nor
/// write over, an app's unfinished file). The loop turn that read a batch may still hold a readiness event for that
/// descriptor, reported by the same `epoll_wait`; reading the descriptor before NIO handles it would leave NIO
/// nothing to read there. At the end of the turn every readiness event of the turn was handled, and epoll reports
/// readiness afresh in the next one, so the engine reads the descriptor then, once for every batch of the turn.
struct TurnEndBatches {
    struct Batch {
        let requests: ArraySlice<InboundRequest>
        let connection: UInt64
        let outbox: Outbox
        let resume: @Sendable (Int) -> Void
    }

    /// In the order the connections' reads handed them over.
    private(set) var batches: [Batch] = []
    /// Whether the job that serves them is queued on the loop already.
    private(set) var scheduled = false

    /// Keeps a batch; returns whether the caller must queue the job that serves them.
    mutating func keep(_ batch: Batch) -> Bool {
        batches.append(batch)
        defer { scheduled = true }
        return !scheduled
    }

    /// Takes every batch kept, for the job that serves them.
    mutating func take() -> [Batch] {
        scheduled = false
        defer { batches = [] }
        return batches
    }
}

extension EngineCore {
    /// Serves `requests` at the end of this loop turn (see ``TurnEndBatches``); `resume` then gets how many were
    /// served, at once or once a request that waits is answered.
    func serveAtTurnEnd(
        _ requests: ArraySlice<InboundRequest>, connection: UInt64, outbox: Outbox,
        resume: @escaping @Sendable (Int) -> Void
    ) {
        let batch = TurnEndBatches.Batch(requests: requests, connection: connection, outbox: outbox, resume: resume)
        guard turnEnd.keep(batch) else { return }
        environment.loop.eventLoop.assumeIsolated().execute { [self] in handle(.turnEnded) }
    }

    /// The end of the loop turn (``EngineInput/turnEnded``): serves the batches kept for it.
    func serveTurnEndBatches() {
        for batch in turnEnd.take() {
            let served = serveInOrder(
                batch.requests, connection: batch.connection, outbox: batch.outbox, resume: batch.resume)
            if let served { batch.resume(served) }
        }
    }
}
