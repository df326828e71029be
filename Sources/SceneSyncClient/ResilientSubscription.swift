public import SceneSyncCore

/// A subscription that outlives connections: it reconnects by itself after the daemon restarts, crashes or drops
/// the connection, and resumes where it left off.
///
/// Iterate it like any `AsyncSequence`; each iteration opens its own connection. It ends only when the consuming task
/// is cancelled (then it closes its connection cleanly and finishes without error), or with an error the daemon
/// gave for the subscription itself (a `SceneSyncError` such as `bad_request`), or, when ``waitsForDaemon`` is
/// false, with ``SceneSyncConnectionError/noDaemon(path:reason:)`` if the very first connection fails.
///
/// ## The consumer's contract
///
/// Keep a view of the matching scenes and apply events in order:
///
/// - ``SceneSyncEvent/state(_:)``: the scene is exactly this now.
/// - ``SceneSyncEvent/change(_:)``: apply it (a `set` replaces the path, a `delete` removes the scene).
/// - ``SceneSyncEvent/resync(_:)``: your view is stale; drop it. A `state` for every matching scene follows, then
///   ``SceneSyncEvent/synced(_:)``: scenes without a `state` in between no longer exist.
/// - ``SceneSyncEvent/synced(_:)``: your view now equals the daemon's state at that clock.
///
/// Followed this way, the view is always consistent, across any number of reconnections:
///
/// - On a connection loss you get ``SceneSyncEvent/disconnected(reason:)`` (after ``SceneSyncEvent/shutdown`` when
///   the daemon stopped cleanly). Your view stays valid, just not current. A daemon that announced its shutdown is
///   not subscribed to again (every connection starts with `hello`, whose `pid` tells), even if it still accepts
///   connections while it stops: the subscription waits for the next daemon.
/// - When connected again you get ``SceneSyncEvent/reconnected(resumedAt:)``. The subscription re-subscribes with
///   `since` = the last clock it delivered (the revision of the last `change`, `synced` or `heartbeat`). If the
///   daemon still has every change after it (it restarted cleanly, or only the connection dropped), `resumedAt` is
///   that clock and the missed changes follow, then `synced`: nothing is lost or repeated. If it cannot resume
///   (`epoch`: the daemon restarted without a clean shutdown, e.g. after `kill -9`; `compacted`: the changes are no
///   longer in its history), `resumedAt` is `nil` and a ``SceneSyncEvent/resync(_:)`` with that reason follows, with
///   the fresh state and `synced`.
/// - If the connection is lost while a view is incomplete (before the first `synced`, or between a resync and its
///   `synced`), the subscription starts over: `reconnected(resumedAt: nil)`, a resync with reason
///   ``SceneSyncEvent/ResyncReason/interrupted``, the full state and `synced`.
/// - A subscriber that reads too slowly gets the daemon's own `resync` with reason `lagged`, handled the same way.
///   One that falls more than ``maxBufferedEvents`` behind in the client loses its connection:
///   it reads what was queued, then, once it has caught up, `reconnected` and the rest from where it stopped. The
///   client never holds more than that many events for it.
public struct ResilientSubscription: AsyncSequence, Sendable {
    /// Protocol events, plus the client-side `disconnected`, `reconnected` and `resync(.interrupted)`.
    public typealias Element = SceneSyncEvent
    /// Only the final errors listed above.
    public typealias Failure = any Error

    /// The daemon's control socket.
    public var socketPath: String
    /// Shell globs over scene IDs; `nil` for every scene.
    public var patterns: [String]?
    /// Where the first subscription resumes (a clock the consumer saved earlier); `nil` starts with the full state.
    public var since: Clock?
    /// Whether a subscription without `since` starts with the state of every matching scene.
    public var initial: Bool
    /// The name given in `hello` on every connection (it shows as `origin.client` of changes), or none.
    public var clientName: String?
    /// Whether to keep trying when the daemon is not running when iteration starts. With `false` the first failed
    /// connection ends the sequence with ``SceneSyncConnectionError/noDaemon(path:reason:)`` (a CLI wants to say so
    /// at once); later losses are always retried.
    public var waitsForDaemon: Bool
    /// The waits between connection attempts.
    public var backoff: ReconnectBackoff
    /// Events held for a consumer that has not read them; past this the connection ends, and the subscription
    /// resumes after the last event queued once the consumer has read them.
    public var maxBufferedEvents: Int

    /// Describes the subscription; nothing connects until iteration starts.
    public init(
        socketPath: String = SceneSyncSocket.defaultPath(), patterns: [String]? = nil, since: Clock? = nil,
        initial: Bool = true, clientName: String? = nil, waitsForDaemon: Bool = true,
        backoff: ReconnectBackoff = ReconnectBackoff(), maxBufferedEvents: Int = SceneSyncConnection.maxBufferedEvents
    ) {
        self.socketPath = socketPath
        self.patterns = patterns
        self.since = since
        self.initial = initial
        self.clientName = clientName
        self.waitsForDaemon = waitsForDaemon
        self.backoff = backoff
        self.maxBufferedEvents = Swift.max(1, maxBufferedEvents)
    }

    /// The same events with the JSON they came in (client-side events get an object of the same shape). Each call
    /// starts an independent subscription with its own connection.
    public var received: AsyncThrowingStream<ReceivedEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: ReceivedEvent.self, bufferingPolicy: .bufferingOldest(maxBufferedEvents))
        let configuration = self
        let task = Task { await configuration.run(delivering: continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Starts an independent subscription with its own connection.
    public func makeAsyncIterator() -> SceneSyncSubscription.Iterator {
        SceneSyncSubscription.Iterator(base: received.makeAsyncIterator())
    }
}
