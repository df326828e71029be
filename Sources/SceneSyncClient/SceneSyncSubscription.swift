public import SceneSyncCore

/// The events of one `subscribe` on one connection, as an `AsyncSequence`.
///
/// Delivery is the daemon's: ordered by revision, no duplicates, no gaps until a ``SceneSyncEvent/resync(_:)``.
/// The sequence throws when the connection ends (a ``SceneSyncConnectionError``), after a
/// ``SceneSyncEvent/shutdown`` if the daemon announced it; it finishes normally after
/// ``SceneSyncConnection/unsubscribe(_:)``. It does not reconnect: use ``ResilientSubscription`` for a view that
/// survives daemon restarts.
///
/// Events wait in the client for their consumer, up to ``SceneSyncConnection/maxBufferedEvents``, so the reader of
/// the socket never waits for a slow consumer (and answers to other requests on the connection keep flowing). A
/// consumer that falls further behind loses the subscription: it reads what was queued, gap-free, then the sequence
/// throws ``SceneSyncConnectionError/disconnected(reason:)``. ``ResilientSubscription`` resumes from there by
/// itself.
///
/// Only one task may iterate a subscription. Dropping the iterator ends the subscription on the daemon too.
public struct SceneSyncSubscription: AsyncSequence, Sendable {
    /// The daemon's events for this subscription.
    public typealias Element = SceneSyncEvent
    /// A ``SceneSyncConnectionError`` when the connection ends.
    public typealias Failure = any Error

    /// The daemon's subscription ID: events of this subscription carry it.
    public let id: UInt64
    /// The daemon's clock when it answered `subscribe`.
    public let clock: Clock
    /// The same events with the JSON they came in, for tools that pass them on unchanged.
    public let received: AsyncThrowingStream<ReceivedEvent, any Error>

    init(id: UInt64, clock: Clock, received: AsyncThrowingStream<ReceivedEvent, any Error>) {
        self.id = id
        self.clock = clock
        self.received = received
    }

    /// The events in order; only one iterator may be used.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: received.makeAsyncIterator())
    }

    /// Yields each received event's ``ReceivedEvent/event``.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<ReceivedEvent, any Error>.AsyncIterator

        /// The next event; `nil` after `unsubscribe` or when the consuming task is cancelled.
        public mutating func next() async throws -> SceneSyncEvent? {
            try await base.next()?.event
        }
    }
}
