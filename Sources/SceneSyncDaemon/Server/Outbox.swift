import NIOCore
import Synchronization

/// Everything waiting to be written to one connection: responses, and the events of its subscriptions.
///
/// The engine appends without ever waiting, so a client that does not read cannot slow the owner loop or anyone
/// else. Two bounds keep what one connection can make the daemon hold (§6):
///
/// - Each subscription may hold at most `socket.subscriber_queue` queued change events; past that its queued events
///   are dropped and a single lag marker is queued instead. When the connection's writer reaches the marker (the
///   client is reading again), it asks the engine for a `resync` with reason `lagged`. What was already handed to
///   the socket is a gap-free prefix, so the subscriber never sees a hole without a resync.
/// - Everything else (responses, `resync`/`synced` and other events) counts against `socket.max_pending_bytes`.
///   While a connection is at that bound, its reader stops (``waitForRoom()``), so it reads no further requests.
///   The `state` events of a catch-up are not queued at all: a ``Item/catchUp(subscription:)`` marker stands for
///   them, and the writer has the engine produce them a chunk at a time as the socket takes them.
///
/// A connection whose pending output has not moved for `socket.stall_timeout_s` is stalled (``isStalled(now:)``).
final class Outbox: Sendable {
    enum Item: Sendable {
        /// A complete line (a response, or an event without subscription such as `shutdown`).
        case line([UInt8])
        /// A subscription event: `{"event":name,"subscription":id[,body]}`; `body` is shared by every subscriber.
        case event(subscription: UInt64, name: String, body: [UInt8])
        /// The subscription dropped events; the writer must request a resync when it gets here.
        case lagged(subscription: UInt64)
        /// The `state` events of a subscription's catch-up go here, produced by the engine as the socket takes them.
        case catchUp(subscription: UInt64)
    }

    private struct State {
        var items = CircularBuffer<Item>(initialCapacity: 16)
        var queuedPerSubscription: [UInt64: Int] = [:]
        var lagging: Set<UInt64> = []
        /// The connection's one writer, waiting for items. One slot, not a list: each connection has one writer and
        /// one reader, and a second waiter in either slot is a programming error that stops the process rather
        /// than leak the first (whose task would then never end).
        var waiter: CheckedContinuation<Void, Never>? = nil
        /// The connection's one reader, waiting for pending output to drop below the bound.
        var roomWaiter: CheckedContinuation<Void, Never>? = nil
        var closed = false
        /// What the queued items cost against `max_pending_bytes`, and what the batch the writer holds costs: kept
        /// apart so that neither taking nor writing a batch has to walk it again.
        var queuedBytes = 0
        var writingBytes = 0
        var pendingBytes: Int { queuedBytes + writingBytes }
        /// The writer holds a batch it has not finished writing.
        var writing = false
        /// When the oldest queued item was queued, and the same for the batch the writer holds: the delivery
        /// latency is measured from it to the moment the batch is written.
        var oldestQueuedAt: ContinuousClock.Instant? = nil
        var batchQueuedAt: ContinuousClock.Instant? = nil
        /// When the writer last handed bytes to the socket, or when output became pending after none was: for the
        /// stall timeout.
        var lastProgress = ContinuousClock.now

        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }

        /// Hands the whole queue over to the writer (no copy, no per-item reference counting), or `nil` when
        /// nothing is queued. Since nothing stays queued, every subscription's count drops to zero at once; the
        /// bytes they cost stay pending until ``Outbox/wrote()``.
        mutating func takeAll() -> CircularBuffer<Item>? {
            guard !items.isEmpty else { return nil }
            let taken = items
            items = CircularBuffer(initialCapacity: max(16, min(taken.count, 1024)))
            queuedPerSubscription.removeAll(keepingCapacity: true)
            writing = true
            writingBytes = queuedBytes
            queuedBytes = 0
            batchQueuedAt = oldestQueuedAt
            oldestQueuedAt = nil
            return taken
        }

        var isIdle: Bool { items.isEmpty && !writing }
    }

    private let state = Mutex(State())
    let limits: ConnectionLimits
    let counters: DeliveryCounters

    init(limits: ConnectionLimits, counters: DeliveryCounters) {
        self.limits = limits
        self.counters = counters
    }

    /// For tests: fixed bounds.
    convenience init(limit: Int, counters: DeliveryCounters, maxPendingBytes: Int = 8 << 20) {
        self.init(
            limits: ConnectionLimits(subscriberQueue: limit, maxPendingBytes: maxPendingBytes), counters: counters)
    }

    /// What an item costs against `max_pending_bytes`: about its size on the wire. Change events are bounded by
    /// their number instead (`subscriber_queue`), and the markers cost nothing.
    private static func cost(_ item: Item) -> Int {
        switch item {
        case .line(let bytes): bytes.count
        case .event(_, let name, let body): name == "change" ? 0 : 48 + name.utf8.count + body.count
        case .lagged, .catchUp: 0
        }
    }

    func enqueue(line: [UInt8]) {
        append(.line(line), cost: line.count)
    }

    /// Queues the marker for a catch-up the engine prepared (see ``SceneEngine/nextCatchUpChunk(subscription:)``).
    func enqueueCatchUp(subscription: UInt64) {
        append(.catchUp(subscription: subscription), cost: 0)
    }

    private func append(_ item: Item, cost: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            if state.isIdle { state.lastProgress = .now }
            if state.items.isEmpty { state.oldestQueuedAt = .now }
            state.items.append(item)
            state.queuedBytes += cost
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// Queues an event for a subscription unless it is lagging. Never blocks.
    ///
    /// Only live events (`counted`) count against `subscriber_queue`. A catch-up burst (`resync`, `synced`) is
    /// bounded by `max_pending_bytes` instead; counting it would make a subscription to more scenes than
    /// `socket.subscriber_queue` lag on its own catch-up, resync, and lag again forever.
    func enqueue(subscription: UInt64, event name: String, body: [UInt8], counted: Bool = true) {
        let limit = limits.subscriberQueue
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            if !state.lagging.isEmpty, state.lagging.contains(subscription) {
                counters.dropped(1)
                return nil
            }
            if state.isIdle { state.lastProgress = .now }
            // One hash lookup per event: the count is read and bumped in place.
            var overLimit = false
            if counted {
                Self.update(&state.queuedPerSubscription[subscription, default: 0]) { queued in
                    if queued >= limit { overLimit = true } else { queued += 1 }
                }
            }
            if overLimit {
                // Drop everything this subscription still has queued; what the socket already has is a prefix.
                var dropped = 0
                var kept = CircularBuffer<Item>(initialCapacity: state.items.count)
                for item in state.items {
                    if case .event(let owner, _, _) = item, owner == subscription {
                        dropped += 1
                        state.queuedBytes -= Self.cost(item)
                    } else {
                        kept.append(item)
                    }
                }
                kept.append(.lagged(subscription: subscription))
                state.items = kept
                state.queuedPerSubscription[subscription] = nil
                state.lagging.insert(subscription)
                counters.dropped(dropped + 1)
                return state.takeWaiter()
            }
            let item = Item.event(subscription: subscription, name: name, body: body)
            if state.items.isEmpty { state.oldestQueuedAt = .now }
            state.items.append(item)
            state.queuedBytes += Self.cost(item)
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    @inline(__always)
    private static func update(_ value: inout Int, _ body: (inout Int) -> Void) { body(&value) }

    /// Called by the engine while it queues a lagging subscription's resync, so that later events queue again.
    func clearLag(subscription: UInt64) {
        state.withLock { _ = $0.lagging.remove(subscription) }
    }

    /// Forgets a subscription's queued events (after `unsubscribe` or when it is removed).
    func forget(subscription: UInt64) {
        state.withLock { state in
            state.lagging.remove(subscription)
            state.queuedPerSubscription[subscription] = nil
        }
    }

    /// Waits for items and takes all of them, so the writer can send them in one write. `nil` once closed and drained.
    func next() async -> CircularBuffer<Item>? {
        while true {
            let batch: CircularBuffer<Item>?? = state.withLock { state in
                if let items = state.takeAll() { return .some(items) }
                return state.closed ? .some(nil) : .none
            }
            if let batch { return batch }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.items.isEmpty || state.closed { return true }
                    precondition(state.waiter == nil, "a second writer waits on one outbox")
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// The writer handed a batch's bytes to the socket: they are no longer pending, and the connection moved.
    func wrote() {
        let (roomWaiter, queuedAt) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, ContinuousClock.Instant?) in
            let queuedAt = state.batchQueuedAt
            state.batchQueuedAt = nil
            state.writingBytes = 0
            state.writing = false
            state.lastProgress = .now
            guard state.pendingBytes < limits.maxPendingBytes else { return (nil, queuedAt) }
            defer { state.roomWaiter = nil }
            return (state.roomWaiter, queuedAt)
        }
        if let queuedAt, let metrics = counters.metrics { metrics.delivery.latency.recordInterval(since: queuedAt) }
        roomWaiter?.resume()
    }

    /// The writer waits for the socket to take the last bytes it handed on: until ``wrote()``, that output is
    /// pending, and a client that stops reading is stalled.
    func awaitFlush() {
        state.withLock { state in
            state.writing = true
            state.lastProgress = .now
        }
    }

    /// The writer handed part of a batch (a catch-up chunk) to the socket: the connection moved.
    func noteProgress() {
        state.withLock { $0.lastProgress = .now }
    }

    /// Takes every queued item as ``next()`` does, without waiting: an empty batch when nothing is queued. For the
    /// engine's simulation, which plays the writer one step at a time.
    func takeQueued() -> CircularBuffer<Item> {
        state.withLock { $0.takeAll() } ?? CircularBuffer()
    }

    /// How many change events of a subscription are queued now, counted item by item rather than read from the
    /// count the bound is enforced with: for tests of the bound itself.
    func queuedChangeEvents(subscription: UInt64) -> Int {
        state.withLock { state in
            state.items.reduce(0) { count, item in
                guard case .event(let owner, "change", _) = item, owner == subscription else { return count }
                return count + 1
            }
        }
    }

    /// Whether the writer waits for items: for tests, which wait on it instead of sleeping.
    var writerIsWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// Whether the reader waits for room: for tests, as above.
    var readerIsWaiting: Bool { state.withLock { $0.roomWaiter != nil } }

    /// Whether pending output is below `max_pending_bytes`, so the connection's next request may be read.
    var hasRoom: Bool {
        let limit = limits.maxPendingBytes
        return state.withLock { $0.pendingBytes < limit }
    }

    /// Waits until pending output is below `max_pending_bytes` (or the outbox closed).
    func waitForRoom() async {
        let limit = limits.maxPendingBytes
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.closed || state.pendingBytes < limit { return true }
                precondition(state.roomWaiter == nil, "a second reader waits for room in one outbox")
                state.roomWaiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Whether output has been pending, with no byte taken by the socket, for longer than `timeout`: a lagging
    /// subscriber, or a client that sends requests and reads no answers.
    func isStalled(timeout: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            let pending = !state.items.isEmpty || state.writing || !state.lagging.isEmpty
            return pending && now - state.lastProgress > timeout
        }
    }

    var isLagging: Bool { state.withLock { !$0.lagging.isEmpty } }

    var laggingCount: Int { state.withLock { $0.lagging.count } }

    /// Bytes counted against `max_pending_bytes` now.
    var pendingBytes: Int { state.withLock { $0.pendingBytes } }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// Stops accepting items; the writer drains what is queued, then `next()` returns `nil`. A reader waiting for
    /// room is released.
    func close() {
        let (waiter, roomWaiter) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, CheckedContinuation<Void, Never>?) in
            state.closed = true
            defer { state.roomWaiter = nil }
            return (state.takeWaiter(), state.roomWaiter)
        }
        waiter?.resume()
        roomWaiter?.resume()
    }
}

extension Outbox.Item {
    /// Appends the item's bytes as one protocol line.
    func write(to buffer: inout ByteBuffer) {
        switch self {
        case .line(let bytes):
            buffer.writeBytes(bytes)
        case .event(let subscription, let name, let body):
            // Runs once per event and subscriber: constants as static strings, the id's digits written in place.
            buffer.reserveCapacity(minimumWritableBytes: 48 + name.utf8.count + body.count)
            buffer.writeStaticString(#"{"event":""#)
            buffer.writeString(name)
            buffer.writeStaticString(#"","subscription":"#)
            Self.writeDecimal(subscription, to: &buffer)
            if !body.isEmpty {
                buffer.writeInteger(UInt8(ascii: ","))
                buffer.writeBytes(body)
            }
            buffer.writeStaticString("}\n")
        case .lagged, .catchUp:
            break
        }
    }

    static func writeDecimal(_ value: UInt64, to buffer: inout ByteBuffer) {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: digits) { raw in
            var remaining = value
            for index in stride(from: digits - 1, through: 0, by: -1) {
                raw[index] = UInt8(truncatingIfNeeded: 48 + remaining % 10)
                remaining /= 10
            }
            return digits
        }
    }
}

/// Daemon-wide delivery counters for `stats`, mirrored into the metrics when there are any.
final class DeliveryCounters: Sendable {
    private let sent = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)
    let metrics: DaemonMetrics?

    init(metrics: DaemonMetrics? = nil) {
        self.metrics = metrics
    }

    func delivered(_ count: Int) {
        sent.add(count, ordering: .relaxed)
        if count > 0 { metrics?.delivery.delivered.increment(by: count) }
    }

    func dropped(_ count: Int) {
        droppedCount.add(count, ordering: .relaxed)
        metrics?.delivery.dropped.increment(by: count)
    }

    var eventsSent: Int { sent.load(ordering: .relaxed) }
    var eventsDropped: Int { droppedCount.load(ordering: .relaxed) }
}
