import NIOCore

/// Writes every connection that has output, once per turn of the engine loop, the way Redis's
/// `handleClientsWithPendingWrites` does: a change to a hundred subscribers queues a hundred events in one engine
/// call, and one job on the loop then writes them, not a hundred. The clock is read and the delivery figures are
/// recorded once per turn too, not once per delivery.
final class TurnFlusher {
    private let eventLoop: any EventLoop
    private let counters: DeliveryCounters
    /// The connections whose writer was woken since the last flush, in the order they were woken.
    private var due: [ConnectionHandler] = []
    /// While a flush runs: the events it wrote and when the oldest of them was queued.
    private var turn: (events: Int, oldest: LoopInstant?)? = nil

    init(eventLoop: any EventLoop, counters: DeliveryCounters) {
        self.eventLoop = eventLoop
        self.counters = counters
    }

    /// The connection has output: it is written at the end of this loop turn.
    func schedule(_ handler: ConnectionHandler) {
        due.append(handler)
        guard due.count == 1 else { return }
        eventLoop.assumeIsolated().execute { self.flush() }
    }

    /// The time for what a flush records (a batch written, the socket's progress): read once when the flush began,
    /// not once per connection it writes; read now outside a flush.
    var now: LoopInstant { flushBegan ?? .now }
    private var flushBegan: LoopInstant? = nil

    private func flush() {
        let handlers = due
        due = []
        turn = (0, nil)
        flushBegan = .now
        defer { flushBegan = nil }
        for handler in handlers { handler.drainScheduled() }
        if let (events, oldest) = turn { record(events: events, oldest: oldest) }
        turn = nil
    }

    /// A batch was written: `events` events, the oldest queued at `queuedAt`. Counted with the turn's when a flush
    /// writes it; on its own when the socket took it later.
    func delivered(events: Int, queuedAt: LoopInstant?) {
        guard var current = turn else {
            record(events: events, oldest: queuedAt)
            return
        }
        current.events += events
        if let queuedAt, current.oldest.map({ queuedAt < $0 }) ?? true { current.oldest = queuedAt }
        turn = current
    }

    private func record(events: Int, oldest: LoopInstant?) {
        if events > 0 { counters.delivered(events) }
        if let oldest, let metrics = counters.metrics { metrics.delivery.latency.recordInterval(since: oldest.instant) }
    }
}
