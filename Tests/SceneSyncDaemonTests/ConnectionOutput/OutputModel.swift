@testable import SceneSyncDaemon

/// A reference model of ``ConnectionOutput``: the rules of §6 restated as plainly as possible, with arrays that are
/// walked on every input instead of counts kept up to date. Slow and obvious, so that where it and the value
/// disagree, the value is the suspect.
struct OutputModel {
    struct Entry {
        var token: OutputToken
        /// Counts against `subscriber_queue`: a live event of a subscription not forgotten since it was queued.
        var counted: Bool
    }

    let bounds: ConnectionOutput.Bounds
    private(set) var queue: [Entry] = []
    /// When the queue last went from empty to holding something: what it holds has waited since then.
    private(set) var queueSince: LoopInstant? = nil
    /// What the writer took and has not reported written, and since when the oldest of it waited.
    private(set) var held: (tokens: [OutputToken], since: LoopInstant?)? = nil
    private(set) var lagging: Set<UInt64> = []
    private(set) var closed = false
    private(set) var writerWaiting = false
    private(set) var readerWaiting = false
    /// When output last moved: written, partly taken by the socket, a flush begun, or pending again after none was.
    private(set) var lastMoved: LoopInstant

    init(bounds: ConnectionOutput.Bounds, now: LoopInstant) {
        self.bounds = bounds
        lastMoved = now
    }

    var pendingBytes: Int {
        queue.map(\.token.cost).reduce(0, +) + (held?.tokens.map(\.cost).reduce(0, +) ?? 0)
    }

    func isStalled(timeout: Duration, now: LoopInstant) -> Bool {
        let pending = !queue.isEmpty || held != nil || !lagging.isEmpty
        return pending && now - lastMoved > timeout
    }

    mutating func enqueue(
        _ token: OutputToken, counted: Bool, at now: LoopInstant
    )
        -> ConnectionOutput.Enqueued
    {
        if closed { return .refused }
        if token.isEvent, let subscription = token.subscription, lagging.contains(subscription) {
            return .droppedWhileLagging
        }
        if queue.isEmpty && held == nil { lastMoved = now }
        if counted, let subscription = token.subscription {
            let queued = queue.filter { $0.counted && $0.token.subscription == subscription }.count
            if queued >= bounds.subscriberQueue {
                let before = queue.count
                queue.removeAll { $0.token.isEvent && $0.token.subscription == subscription }
                let dropped = before - queue.count
                queue.append(Entry(token: .lagged(subscription: subscription), counted: false))
                lagging.insert(subscription)
                return .lagStarted(dropped: dropped, wakeWriter: wakeWriter())
            }
        }
        if queue.isEmpty { queueSince = now }
        queue.append(Entry(token: token, counted: counted))
        return .queued(wakeWriter: wakeWriter())
    }

    private mutating func wakeWriter() -> Bool {
        defer { writerWaiting = false }
        return writerWaiting
    }

    mutating func clearLag(_ subscription: UInt64) {
        lagging.remove(subscription)
    }

    mutating func forget(_ subscription: UInt64) {
        lagging.remove(subscription)
        for index in queue.indices where queue[index].token.subscription == subscription {
            queue[index].counted = false
        }
    }

    /// The tokens taken, or nil with whether the writer is done (closed and nothing left).
    mutating func takeAll() -> (tokens: [OutputToken]?, finished: Bool) {
        if queue.isEmpty { return (nil, closed) }
        let tokens = queue.map(\.token)
        held = ((held?.tokens ?? []) + tokens, held?.since ?? queueSince)
        queue = []
        queueSince = nil
        return (tokens, false)
    }

    mutating func writerWaits() -> Bool {
        writerWaiting = queue.isEmpty && !closed
        return writerWaiting
    }

    mutating func wrote(at now: LoopInstant) -> ConnectionOutput.Written {
        let since = held?.since
        held = nil
        lastMoved = now
        let release = readerWaiting && pendingBytes < bounds.maxPendingBytes
        if release { readerWaiting = false }
        return ConnectionOutput.Written(releaseReader: release, queuedAt: since)
    }

    mutating func flushing(at now: LoopInstant) {
        held = ([], nil)
        lastMoved = now
    }

    mutating func noteProgress(at now: LoopInstant) {
        lastMoved = now
    }

    mutating func readerWaits() -> Bool {
        readerWaiting = !closed && pendingBytes >= bounds.maxPendingBytes
        return readerWaiting
    }

    mutating func close() -> ConnectionOutput.Closed {
        closed = true
        defer { (writerWaiting, readerWaiting) = (false, false) }
        return ConnectionOutput.Closed(wakeWriter: writerWaiting, releaseReader: readerWaiting)
    }
}
