import NIOCore
import Synchronization

/// Everything waiting to be written to one connection: responses, and the events of its subscriptions.
///
/// The engine appends without ever waiting, so a client that does not read cannot slow the owner loop or anyone
/// else. Each subscription may hold at most `limit` queued events; past that its queued events are dropped and a
/// single lag marker is queued instead. When the connection's writer reaches the marker (the client is reading
/// again), it asks the engine for a `resync` with reason `lagged`. What was already handed to the socket is a
/// gap-free prefix, so the subscriber never sees a hole without a resync.
final class Outbox: Sendable {
    enum Item: Sendable {
        /// A complete line (a response, or an event without subscription such as `shutdown`).
        case line([UInt8])
        /// A subscription event: `{"event":name,"subscription":id[,body]}`; `body` is shared by every subscriber.
        case event(subscription: UInt64, name: String, body: [UInt8])
        /// The subscription dropped events; the writer must request a resync when it gets here.
        case lagged(subscription: UInt64)
    }

    private struct State {
        var items = CircularBuffer<Item>(initialCapacity: 16)
        var queuedPerSubscription: [UInt64: Int] = [:]
        var lagging: Set<UInt64> = []
        var waiter: CheckedContinuation<Void, Never>? = nil
        var closed = false
        /// When the writer last handed bytes to the socket, for the stall timeout.
        var lastProgress = ContinuousClock.now

        mutating func takeWaiter() -> CheckedContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    private let state = Mutex(State())
    let limit: Int
    let counters: DeliveryCounters

    init(limit: Int, counters: DeliveryCounters) {
        self.limit = max(1, limit)
        self.counters = counters
    }

    func enqueue(line: [UInt8]) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            state.items.append(.line(line))
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// Queues an event for a subscription unless it is lagging. Never blocks.
    ///
    /// Only live events (`counted`) count against the limit. A catch-up burst (`state` per scene, `resync`,
    /// `synced`) is bounded by the number of scenes, not by a client's speed; counting it would make a subscription
    /// to more scenes than `socket.subscriber_queue` lag on its own catch-up, resync, and lag again forever.
    func enqueue(subscription: UInt64, event name: String, body: [UInt8], counted: Bool = true) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.closed else { return nil }
            if !state.lagging.isEmpty, state.lagging.contains(subscription) {
                counters.dropped(1)
                return nil
            }
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
            state.items.append(.event(subscription: subscription, name: name, body: body))
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
    ///
    /// The queue itself is handed over (no copy, no per-item reference counting), and since nothing stays queued,
    /// every subscription's count drops to zero at once.
    func next() async -> CircularBuffer<Item>? {
        while true {
            let batch: CircularBuffer<Item>?? = state.withLock { state in
                if !state.items.isEmpty {
                    let items = state.items
                    state.items = CircularBuffer(initialCapacity: max(16, items.count))
                    state.queuedPerSubscription.removeAll(keepingCapacity: true)
                    return .some(items)
                }
                return state.closed ? .some(nil) : .none
            }
            if let batch { return batch }
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if !state.items.isEmpty || state.closed { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    /// The writer handed a batch to the socket.
    func noteProgress() {
        state.withLock { $0.lastProgress = .now }
    }

    /// Whether a lagging subscription has not been read from for `timeout`.
    func isStalled(timeout: Duration, now: ContinuousClock.Instant) -> Bool {
        state.withLock { state in
            !state.lagging.isEmpty && now - state.lastProgress > timeout
        }
    }

    var isLagging: Bool { state.withLock { !$0.lagging.isEmpty } }

    var laggingCount: Int { state.withLock { $0.lagging.count } }

    /// Stops accepting items; the writer drains what is queued, then `next()` returns `nil`.
    func close() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = true
            return state.takeWaiter()
        }
        waiter?.resume()
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
        case .lagged:
            break
        }
    }

    private static func writeDecimal(_ value: UInt64, to buffer: inout ByteBuffer) {
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

/// Daemon-wide delivery counters for `stats`.
final class DeliveryCounters: Sendable {
    private let sent = Atomic<Int>(0)
    private let droppedCount = Atomic<Int>(0)

    func delivered(_ count: Int) { sent.add(count, ordering: .relaxed) }
    func dropped(_ count: Int) { droppedCount.add(count, ordering: .relaxed) }

    var eventsSent: Int { sent.load(ordering: .relaxed) }
    var eventsDropped: Int { droppedCount.load(ordering: .relaxed) }
}
