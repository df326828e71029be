import NIOCore

/// The output side of one connection as a value: what is queued for its socket, and the bounds of §6 that keep what
/// one client can make the daemon hold. No locks, no clock, no tasks: every time is an input, and every effect an
/// outcome the shell (``Outbox``) acts on, so that every interleaving of the engine queuing, the writer writing and
/// the reader waiting is checked on its own (`ConnectionOutputTests`, and `ConnectionOutputScheduleTests` against a
/// reference model).
///
/// - Each subscription may hold at most `subscriber_queue` counted (live) events; past that its queued events are
///   dropped and a single lag marker is queued instead. When the writer reaches the marker (the client reads
///   again), it asks the engine for a `resync` with reason `lagged`. What was already taken by the writer is a
///   gap-free prefix, so the subscriber never sees a hole without a resync.
/// - Everything else (responses, `resync`/`synced` and other events) costs its bytes against `max_pending_bytes`
///   until written. While the connection is at that bound its reader waits, so it reads no further requests. The
///   `state` events of a catch-up are not queued at all: a ``Item/catchUp(subscription:)`` marker stands for them.
/// - Output that is pending and has not moved for `stall_timeout_s` is stalled (``isStalled(timeout:now:)``).
///
/// One writer and one reader per connection: a second waiter in either slot is a programming error.
struct ConnectionOutput: Sendable {
    /// The bounds of §6, set by the shell before each input, so that a reload applies to open connections at once.
    struct Bounds: Equatable, Sendable {
        /// `socket.subscriber_queue`: counted events one subscription may have queued.
        var subscriberQueue: Int
        /// `socket.max_pending_bytes`: unwritten bytes (change events aside) at which the reader stops.
        var maxPendingBytes: Int
    }

    /// What the writer took and has not reported written: its bytes stay pending until then.
    private struct HeldBatch {
        var bytes: Int
        /// When its oldest item was queued; nil for a flush, which holds no items.
        var queuedAt: LoopInstant?
    }

    var bounds: Bounds
    /// What waits for the writer, in order.
    private(set) var items = CircularBuffer<Item>(initialCapacity: 16)
    /// The counted events each subscription has queued: kept rather than counted, since every live event checks it.
    private var queuedPerSubscription = SubscriptionCounts()
    /// Subscriptions whose lag marker is queued or taken, until the engine queues their resync
    /// (``clearLag(subscription:)``).
    private(set) var lagging: Set<UInt64> = []
    private(set) var isClosed = false
    /// What the queued items cost against `max_pending_bytes`, kept apart from the held batch's so that neither
    /// taking nor writing a batch walks it again.
    private var queuedBytes = 0
    private var held: HeldBatch? = nil
    /// When the oldest queued item was queued: the delivery latency runs from it to the write.
    private var oldestQueuedAt: LoopInstant? = nil
    /// When the writer last handed bytes to the socket, or when output became pending after none was.
    private var lastProgress: LoopInstant
    /// The writer found nothing and waits for ``Enqueued/queued(wakeWriter:)`` or ``Closed/wakeWriter``.
    private(set) var writerIsWaiting = false
    /// The reader waits for ``Written/releaseReader`` or ``Closed/releaseReader``.
    private(set) var readerIsWaiting = false
    /// The storage of a batch the writer wrote, empty, for the queue after the next take (``recycle(_:)``).
    private var spare: CircularBuffer<Item>? = nil

    init(bounds: Bounds, now: LoopInstant) {
        self.bounds = bounds
        lastProgress = now
    }

    /// Bytes counted against `max_pending_bytes`: queued, and taken but not yet written.
    var pendingBytes: Int { queuedBytes + (held?.bytes ?? 0) }

    /// Whether the connection's next request may be read: pending output is below `max_pending_bytes` (§6).
    var hasRoom: Bool { pendingBytes < bounds.maxPendingBytes }

    var isLagging: Bool { !lagging.isEmpty }

    /// Nothing queued and nothing held by the writer: the next item makes output pending again.
    private var isIdle: Bool { items.isEmpty && held == nil }

    // MARK: - The engine queues
    //
    // Each takes its time as an autoclosure: only the first item of an empty queue reads it (it starts the wait of
    // the delivery latency, and the stall clock of an idle connection), so the shell reads the clock then, not once
    // per delivery.

    /// Queues a complete line: a response, or an event without subscription.
    mutating func enqueue(line: [UInt8], at now: @autoclosure () -> LoopInstant) -> Enqueued {
        guard !isClosed else { return .refused }
        return append(.line(line), at: now)
    }

    /// Queues the marker of a catch-up the engine prepared (see ``EngineCore/nextCatchUpChunk(subscription:)``).
    mutating func enqueueCatchUp(
        subscription: UInt64, at now: @autoclosure () -> LoopInstant
    ) -> Enqueued {
        guard !isClosed else { return .refused }
        return append(.catchUp(subscription: subscription), at: now)
    }

    /// Queues an event of a subscription unless it lags.
    ///
    /// Only live events (`counted`) count against `subscriber_queue`. A catch-up burst (`resync`, `synced`) is
    /// bounded by `max_pending_bytes` instead; counting it would make a subscription to more scenes than
    /// `subscriber_queue` lag on its own catch-up, resync, and lag again forever.
    mutating func enqueue(
        subscription: UInt64, event name: EventName, body: [UInt8], counted: Bool,
        at now: @autoclosure () -> LoopInstant
    ) -> Enqueued {
        guard !isClosed else { return .refused }
        if !lagging.isEmpty, lagging.contains(subscription) { return .droppedWhileLagging }
        if counted {
            guard queuedPerSubscription.increment(subscription, limit: bounds.subscriberQueue) else {
                return startLag(subscription, at: now)
            }
        }
        return append(.event(subscription: subscription, name: name, body: body), at: now)
    }

    /// Takes `item` over (moved into the queue, not copied: a delivery retains the shared body once).
    private mutating func append(_ item: consuming Item, at now: () -> LoopInstant) -> Enqueued {
        if items.isEmpty {
            let time = now()
            if held == nil { lastProgress = time }
            oldestQueuedAt = time
        }
        queuedBytes += item.cost
        items.append(item)
        return .queued(wakeWriter: takeWriterWaiting())
    }

    /// Drops everything the subscription still has queued (what the writer took is a prefix) and queues its one
    /// lag marker in their place. The bytes of dropped events other than changes are no longer pending, but a
    /// waiting reader gets that room only at the next write, as it always did: the marker makes sure one comes.
    private mutating func startLag(_ subscription: UInt64, at now: () -> LoopInstant) -> Enqueued {
        if isIdle { lastProgress = now() }
        var dropped = 0
        var kept = CircularBuffer<Item>(initialCapacity: items.count)
        for item in items {
            if case .event(let owner, _, _) = item, owner == subscription {
                dropped += 1
                queuedBytes -= item.cost
            } else {
                kept.append(item)
            }
        }
        kept.append(.lagged(subscription: subscription))
        items = kept
        queuedPerSubscription.remove(subscription)
        lagging.insert(subscription)
        return .lagStarted(dropped: dropped, wakeWriter: takeWriterWaiting())
    }

    private mutating func takeWriterWaiting() -> Bool {
        defer { writerIsWaiting = false }
        return writerIsWaiting
    }

    /// The engine queues the lagging subscription's resync now, so that later events queue again.
    mutating func clearLag(subscription: UInt64) {
        lagging.remove(subscription)
    }

    /// The subscription is gone (`unsubscribe`, or its connection): its lag and its count are forgotten. Its
    /// queued events stay, in order with the response that ended it. Subscription IDs are never reused, so
    /// nothing is counted for it again.
    mutating func forget(subscription: UInt64) {
        lagging.remove(subscription)
        queuedPerSubscription.remove(subscription)
    }

    // MARK: - The writer

    /// Hands every queued item to the writer for one write (no copy, no per-item reference counting). Since
    /// nothing stays queued, every subscription's count drops to zero at once; the bytes stay pending until
    /// ``wrote(at:)``.
    ///
    /// Taking again before reporting the last batch written is legal: the writer then holds both, and their
    /// bytes stay pending until the one ``wrote(at:)`` that follows. The daemon's writer always reports each
    /// batch, but `OutboxTests` take twice, as a writer that has handed on nothing yet would.
    mutating func takeAll() -> Take {
        guard !items.isEmpty else { return isClosed ? .finished : .nothingQueued }
        let taken = items
        items = spare ?? CircularBuffer(initialCapacity: max(16, min(taken.count, Self.largestFreshQueue)))
        spare = nil
        queuedPerSubscription.removeAll()
        var batch = held ?? HeldBatch(bytes: 0, queuedAt: nil)
        batch.bytes += queuedBytes
        batch.queuedAt = batch.queuedAt ?? oldestQueuedAt
        held = batch
        queuedBytes = 0
        oldestQueuedAt = nil
        return .batch(taken)
    }

    /// Takes back the storage of a batch the writer emptied, to queue into after the next take: a writer that
    /// takes one event per loop turn, as each subscriber of a paced change does, then allocates no queue per
    /// delivery. A storage grown past ``recycledCapacity`` by a backlog is let go, so an idle connection holds at
    /// most a few KiB more.
    mutating func recycle(_ emptied: consuming CircularBuffer<Item>) {
        guard emptied.isEmpty, emptied.capacity <= Self.recycledCapacity else { return }
        spare = emptied
    }

    /// The largest queue storage kept for reuse.
    static let recycledCapacity = 256

    /// The most items a fresh queue is made room for: as many as the batch just taken, so that a subscriber that
    /// keeps up under load queues the next batch without the storage doubling on the way (4 % of a saturated
    /// fan-out's CPU). A connection that goes quiet after a burst holds that room until its next batch: at most
    /// 4,096 items, about 100 KiB.
    static let largestFreshQueue = 4096

    /// The writer found nothing to take: whether it must wait (it is then woken by an item or the close), or may
    /// take again at once because one of them came meanwhile.
    mutating func writerWaits() -> Bool {
        guard items.isEmpty, !isClosed else { return false }
        guard !writerIsWaiting else { preconditionFailure("a second writer waits on one outbox") }
        writerIsWaiting = true
        return true
    }

    /// The writer handed what it held to the socket: those bytes are no longer pending, and the connection moved.
    /// Only after a batch was taken (or a flush begun): the writer reports what it holds, and a report of nothing
    /// would free room that no write made.
    mutating func wrote(at now: LoopInstant) -> Written {
        guard let batch = held else { preconditionFailure("a batch was reported written, but none was taken") }
        held = nil
        lastProgress = now
        return Written(releaseReader: releaseReaderIfRoom(), queuedAt: batch.queuedAt)
    }

    /// The writer waits for the socket to take the last bytes it handed on: until ``wrote(at:)``, that output is
    /// pending, and a client that stops reading is stalled. Only once the writer reported its last batch, as it
    /// does before its final flush.
    mutating func flushing(at now: LoopInstant) {
        guard held == nil else { preconditionFailure("a flush began while a batch was not reported written") }
        held = HeldBatch(bytes: 0, queuedAt: nil)
        lastProgress = now
    }

    /// The socket took part of what the writer holds (a catch-up chunk, or bytes the channel buffered): the
    /// connection moved.
    mutating func noteProgress(at now: LoopInstant) {
        lastProgress = now
    }

    // MARK: - The reader

    /// The reader wants to read the next request: whether it must wait for room (it is then released by a write
    /// or the close), or may read at once.
    mutating func readerWaits() -> Bool {
        guard !isClosed, !hasRoom else { return false }
        guard !readerIsWaiting else { preconditionFailure("a second reader waits for room in one outbox") }
        readerIsWaiting = true
        return true
    }

    private mutating func releaseReaderIfRoom() -> Bool {
        guard readerIsWaiting, hasRoom else { return false }
        readerIsWaiting = false
        return true
    }

    // MARK: - Closing and stalls

    /// Stops accepting items: the writer drains what is queued, then ``takeAll()`` says `finished`. A reader
    /// waiting for room is released, so that it sees the close.
    mutating func close() -> Closed {
        isClosed = true
        defer { readerIsWaiting = false }
        return Closed(wakeWriter: takeWriterWaiting(), releaseReader: readerIsWaiting)
    }

    /// Whether output has been pending, with no byte taken by the socket, for longer than `timeout`: a lagging
    /// subscriber, or a client that sends requests and reads no answers.
    func isStalled(timeout: Duration, now: LoopInstant) -> Bool {
        let pending = !items.isEmpty || held != nil || !lagging.isEmpty
        return pending && now - lastProgress > timeout
    }
}
