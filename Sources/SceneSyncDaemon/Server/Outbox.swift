import NIOCore

/// Everything waiting to be written to one connection: responses, and the events of its subscriptions.
///
/// The shell around ``ConnectionOutput``, which decides everything (the bounds of §6, lags, catch-up markers,
/// stalls): this class adds only what a value cannot hold. The two hooks of the connection's handler, called when an
/// outcome says its writer must run again or its reader may go on; the clock, read for an input only when the output
/// asks for it; and the daemon-wide counters.
///
/// No lock: the engine that queues and the handler that writes and reads run on the same thread, the engine loop
/// (``EngineLoop``), so every call is made there, one at a time. The engine appends without ever waiting, so a
/// client that does not read cannot slow the loop or anyone else.
final class Outbox: @unchecked Sendable {
    typealias Item = ConnectionOutput.Item

    private var output: ConnectionOutput
    /// Called once when the handler's writer waited for items and one came: it schedules a write for the end of
    /// the loop turn, so a burst of events goes out in one write.
    private var wakeWriter: () -> Void = {}
    /// Called once when the handler's reader waited for room and pending output fell below the bound.
    private var releaseReader: () -> Void = {}
    let limits: ConnectionLimits
    let counters: DeliveryCounters

    init(limits: ConnectionLimits, counters: DeliveryCounters) {
        self.limits = limits
        self.counters = counters
        output = ConnectionOutput(bounds: Self.bounds(limits), now: .now)
    }

    /// For tests: fixed bounds.
    convenience init(limit: Int, counters: DeliveryCounters, maxPendingBytes: Int = 8 << 20) {
        self.init(
            limits: ConnectionLimits(subscriberQueue: limit, maxPendingBytes: maxPendingBytes), counters: counters)
    }

    private static func bounds(_ limits: ConnectionLimits) -> ConnectionOutput.Bounds {
        ConnectionOutput.Bounds(subscriberQueue: limits.subscriberQueue, maxPendingBytes: limits.maxPendingBytes)
    }

    /// The connection's handler plugs in its writer and its reader.
    func attach(wakeWriter: @escaping () -> Void, releaseReader: @escaping () -> Void) {
        self.wakeWriter = wakeWriter
        self.releaseReader = releaseReader
    }

    /// Unplugs the handler's hooks once its channel is inactive: they hold the handler, which holds this outbox.
    func detach() {
        wakeWriter = {}
        releaseReader = {}
    }

    /// The bounds as configured now, so that a reload applies to open connections at once. Read where they decide
    /// something (a counted event, a wait for room), not on every call.
    private func refreshBounds() {
        output.bounds = Self.bounds(limits)
    }

    func enqueue(line: [UInt8]) {
        queue(output.enqueue(line: line, at: .now))
    }

    /// Queues the marker for a catch-up the engine prepared (see ``EngineCore/nextCatchUpChunk(subscription:)``).
    func enqueueCatchUp(subscription: UInt64) {
        queue(output.enqueueCatchUp(subscription: subscription, at: .now))
    }

    /// Queues an event for a subscription unless it is lagging. Never blocks. See
    /// ``ConnectionOutput/enqueue(subscription:event:body:counted:at:)`` for what `counted` means.
    /// `now`: when it is queued, read only if the queue was empty (a fan-out reads the clock once for all).
    func enqueue(
        subscription: UInt64, event name: EventName, body: [UInt8], counted: Bool = true,
        at now: @autoclosure () -> LoopInstant = .now
    ) {
        if counted { output.bounds.subscriberQueue = limits.subscriberQueue }
        queue(output.enqueue(subscription: subscription, event: name, body: body, counted: counted, at: now()))
    }

    /// Acts on what a queuing input of the output says: wakes the writer and counts what was dropped. (The input
    /// reads the clock only for the first item of an empty queue, not once per delivery.)
    private func queue(_ outcome: ConnectionOutput.Enqueued) {
        let dropped = outcome.droppedEvents
        if dropped > 0 { counters.dropped(dropped) }
        if outcome.wakesWriter { wakeWriter() }
    }

    /// Called by the engine while it queues a lagging subscription's resync, so that later events queue again.
    func clearLag(subscription: UInt64) {
        output.clearLag(subscription: subscription)
    }

    /// Forgets a subscription's count and lag (after `unsubscribe` or when it is removed).
    func forget(subscription: UInt64) {
        output.forget(subscription: subscription)
    }

    /// Takes every queued item for one write (see ``ConnectionOutput/takeAll()``).
    func take() -> ConnectionOutput.Take {
        output.takeAll()
    }

    /// The writer emptied a batch it took: its storage is reused (see ``ConnectionOutput/recycle(_:)``).
    func recycle(_ emptied: consuming CircularBuffer<Item>) {
        output.recycle(emptied)
    }

    /// The writer found nothing: whether it now waits for the wake hook, or must take again at once.
    func writerWaits() -> Bool {
        output.writerWaits()
    }

    /// The writer handed a batch's bytes to the socket: they are no longer pending, and the connection moved.
    /// Returns when the batch's oldest item was queued, for the delivery latency.
    @discardableResult
    func wrote(at now: LoopInstant = .now) -> LoopInstant? {
        refreshBounds()
        let written = output.wrote(at: now)
        if written.releaseReader { releaseReader() }
        return written.queuedAt
    }

    /// The socket took part of what the writer holds (a chunk of a batch): the connection moved.
    func noteProgress(at now: LoopInstant = .now) {
        output.noteProgress(at: now)
    }

    /// Takes every queued item as ``take()`` does, as an empty batch when nothing is queued. For tests and the
    /// engine harness, which play the writer one step at a time (and report only a batch they took written).
    func takeQueued() -> CircularBuffer<Item> {
        guard case .batch(let items) = output.takeAll() else { return CircularBuffer() }
        return items
    }

    /// How many change events of a subscription are queued now, counted item by item rather than read from the
    /// count the bound is enforced with: for tests of the bound itself.
    func queuedChangeEvents(subscription: UInt64) -> Int {
        output.queuedChangeEvents(subscription: subscription)
    }

    /// Whether the writer waits for the wake hook: a writer that does must not ask to wait again.
    var writerIsWaiting: Bool { output.writerIsWaiting }

    /// Whether the reader waits for the release hook: a reader that does must not ask to wait again.
    var readerIsWaiting: Bool { output.readerIsWaiting }

    /// Whether pending output is below `max_pending_bytes`, so the connection's next request may be read.
    var hasRoom: Bool {
        refreshBounds()
        return output.hasRoom
    }

    /// The reader wants to serve the next request: whether it must wait for the release hook (pending output is at
    /// `max_pending_bytes`), or may go on at once.
    func readerWaits() -> Bool {
        refreshBounds()
        return output.readerWaits()
    }

    /// Whether output has been pending, with no byte taken by the socket, for longer than `timeout`.
    func isStalled(timeout: Duration, now: ContinuousClock.Instant) -> Bool {
        output.isStalled(timeout: timeout, now: LoopInstant(now))
    }

    var isLagging: Bool { output.isLagging }

    var laggingCount: Int { output.lagging.count }

    /// Bytes counted against `max_pending_bytes` now.
    var pendingBytes: Int { output.pendingBytes }

    var isClosed: Bool { output.isClosed }

    /// Stops accepting items; the writer drains what is queued, then ``take()`` says `finished`. A reader waiting
    /// for room is released.
    func close() {
        let closed = output.close()
        if closed.wakeWriter { wakeWriter() }
        if closed.releaseReader { releaseReader() }
    }
}
