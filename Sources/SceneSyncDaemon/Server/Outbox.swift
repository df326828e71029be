import NIOCore
import Synchronization

/// Everything waiting to be written to one connection: responses, and the events of its subscriptions.
///
/// The shell around ``ConnectionOutput``, which decides everything (the bounds of §6, lags, catch-up markers,
/// stalls): this class adds only what a value cannot hold. A lock, since the engine queues while the connection's
/// writer and reader take and wait; the two continuations of the writer waiting for items and the reader waiting
/// for room, resumed when an outcome says so; the clock, read for each input; and the daemon-wide counters.
///
/// The engine appends without ever waiting, so a client that does not read cannot slow the owner loop or anyone
/// else.
final class Outbox: Sendable {
    typealias Item = ConnectionOutput.Item

    private struct State {
        var output: ConnectionOutput
        /// The connection's one writer, waiting for items: set exactly while `output.writerIsWaiting`. One slot,
        /// not a list: a second waiter is a programming error that stops the process rather than leak the first
        /// (whose task would then never end).
        var writer: CheckedContinuation<Void, Never>? = nil
        /// The connection's one reader, waiting for room: set exactly while `output.readerIsWaiting`.
        var reader: CheckedContinuation<Void, Never>? = nil

        mutating func takeWriter(if wake: Bool) -> CheckedContinuation<Void, Never>? {
            guard wake else { return nil }
            assert(writer != nil, "the output says the writer waits, but no writer does")
            defer { writer = nil }
            return writer
        }

        mutating func takeReader(if release: Bool) -> CheckedContinuation<Void, Never>? {
            guard release else { return nil }
            assert(reader != nil, "the output says the reader waits, but no reader does")
            defer { reader = nil }
            return reader
        }
    }

    private let state: Mutex<State>
    let limits: ConnectionLimits
    let counters: DeliveryCounters
    /// When the outbox was made: the time handed to an enqueue that does not read it.
    private let created: ContinuousClock.Instant

    init(limits: ConnectionLimits, counters: DeliveryCounters) {
        self.limits = limits
        self.counters = counters
        created = .now
        state = Mutex(State(output: ConnectionOutput(bounds: Self.bounds(limits), now: created)))
    }

    /// For tests: fixed bounds.
    convenience init(limit: Int, counters: DeliveryCounters, maxPendingBytes: Int = 8 << 20) {
        self.init(
            limits: ConnectionLimits(subscriberQueue: limit, maxPendingBytes: maxPendingBytes), counters: counters)
    }

    private static func bounds(_ limits: ConnectionLimits) -> ConnectionOutput.Bounds {
        ConnectionOutput.Bounds(subscriberQueue: limits.subscriberQueue, maxPendingBytes: limits.maxPendingBytes)
    }

    /// Runs `body` on the output under the lock, with the bounds as configured now (a reload applies at once).
    private func withOutput<Result: Sendable>(_ body: (inout State) -> Result) -> Result {
        let bounds = Self.bounds(limits)
        return state.withLock { state in
            state.output.bounds = bounds
            return body(&state)
        }
    }

    func enqueue(line: [UInt8]) {
        queue { $0.enqueue(line: line, at: $1) }
    }

    /// Queues the marker for a catch-up the engine prepared (see ``SceneEngine/nextCatchUpChunk(subscription:)``).
    func enqueueCatchUp(subscription: UInt64) {
        queue { $0.enqueueCatchUp(subscription: subscription, at: $1) }
    }

    /// Queues an event for a subscription unless it is lagging. Never blocks. See
    /// ``ConnectionOutput/enqueue(subscription:event:body:counted:at:)`` for what `counted` means.
    func enqueue(subscription: UInt64, event name: String, body: [UInt8], counted: Bool = true) {
        queue { $0.enqueue(subscription: subscription, event: name, body: body, counted: counted, at: $1) }
    }

    /// Applies one queuing input, then wakes the writer and counts what was dropped, outside the lock.
    private func queue(_ input: (inout ConnectionOutput, ContinuousClock.Instant) -> ConnectionOutput.Enqueued) {
        let (outcome, writer) = withOutput { state in
            // No clock read per delivery: only the first item of an empty queue uses its time.
            let now = state.output.enqueueReadsTime ? ContinuousClock.now : created
            let outcome = input(&state.output, now)
            return (outcome, state.takeWriter(if: outcome.wakesWriter))
        }
        let dropped = outcome.droppedEvents
        if dropped > 0 { counters.dropped(dropped) }
        writer?.resume()
    }

    /// Called by the engine while it queues a lagging subscription's resync, so that later events queue again.
    func clearLag(subscription: UInt64) {
        withOutput { $0.output.clearLag(subscription: subscription) }
    }

    /// Forgets a subscription's count and lag (after `unsubscribe` or when it is removed).
    func forget(subscription: UInt64) {
        withOutput { $0.output.forget(subscription: subscription) }
    }

    /// Waits for items and takes all of them, so the writer can send them in one write. `nil` once closed and drained.
    func next() async -> CircularBuffer<Item>? {
        while true {
            switch withOutput({ $0.output.takeAll() }) {
            case .batch(let items): return items
            case .finished: return nil
            case .nothingQueued: break
            }
            await withCheckedContinuation { continuation in
                let waits = withOutput { state in
                    guard state.output.writerWaits() else { return false }
                    state.writer = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        }
    }

    /// The writer handed a batch's bytes to the socket: they are no longer pending, and the connection moved.
    func wrote() {
        let now = ContinuousClock.now
        let (written, reader) = withOutput { state in
            let written = state.output.wrote(at: now)
            return (written, state.takeReader(if: written.releaseReader))
        }
        if let queuedAt = written.queuedAt, let metrics = counters.metrics {
            metrics.delivery.latency.recordInterval(since: queuedAt)
        }
        reader?.resume()
    }

    /// The writer waits for the socket to take the last bytes it handed on: until ``wrote()``, that output is
    /// pending, and a client that stops reading is stalled.
    func awaitFlush() {
        let now = ContinuousClock.now
        withOutput { $0.output.flushing(at: now) }
    }

    /// The writer handed part of a batch (a catch-up chunk) to the socket: the connection moved.
    func noteProgress() {
        let now = ContinuousClock.now
        withOutput { $0.output.noteProgress(at: now) }
    }

    /// Takes every queued item as ``next()`` does, without waiting: an empty batch when nothing is queued. For the
    /// engine's simulation, which plays the writer one step at a time (and reports only a batch it took written).
    func takeQueued() -> CircularBuffer<Item> {
        guard case .batch(let items) = withOutput({ $0.output.takeAll() }) else { return CircularBuffer() }
        return items
    }

    /// How many change events of a subscription are queued now, counted item by item rather than read from the
    /// count the bound is enforced with: for tests of the bound itself.
    func queuedChangeEvents(subscription: UInt64) -> Int {
        withOutput { $0.output.queuedChangeEvents(subscription: subscription) }
    }

    /// Whether the writer waits for items: for tests, which wait on it instead of sleeping.
    var writerIsWaiting: Bool { withOutput { $0.writer != nil } }

    /// Whether the reader waits for room: for tests, as above.
    var readerIsWaiting: Bool { withOutput { $0.reader != nil } }

    /// Whether pending output is below `max_pending_bytes`, so the connection's next request may be read.
    var hasRoom: Bool { withOutput { $0.output.hasRoom } }

    /// Waits until pending output is below `max_pending_bytes` (or the outbox closed).
    func waitForRoom() async {
        await withCheckedContinuation { continuation in
            let waits = withOutput { state in
                guard state.output.readerWaits() else { return false }
                state.reader = continuation
                return true
            }
            if !waits { continuation.resume() }
        }
    }

    /// Whether output has been pending, with no byte taken by the socket, for longer than `timeout`.
    func isStalled(timeout: Duration, now: ContinuousClock.Instant) -> Bool {
        withOutput { $0.output.isStalled(timeout: timeout, now: now) }
    }

    var isLagging: Bool { withOutput { $0.output.isLagging } }

    var laggingCount: Int { withOutput { $0.output.lagging.count } }

    /// Bytes counted against `max_pending_bytes` now.
    var pendingBytes: Int { withOutput { $0.output.pendingBytes } }

    var isClosed: Bool { withOutput { $0.output.isClosed } }

    /// Stops accepting items; the writer drains what is queued, then `next()` returns `nil`. A reader waiting for
    /// room is released.
    func close() {
        let (writer, reader) = withOutput { state in
            let closed = state.output.close()
            return (state.takeWriter(if: closed.wakeWriter), state.takeReader(if: closed.releaseReader))
        }
        writer?.resume()
        reader?.resume()
    }
}
