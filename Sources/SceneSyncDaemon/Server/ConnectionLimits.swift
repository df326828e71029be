import Synchronization

/// The bounds every connection is held to, read afresh at each use so that a reload applies them to open
/// connections at once (§8), not only to new ones.
public final class ConnectionLimits: Sendable {
    private let lineBytes: Atomic<Int>
    private let clients: Atomic<Int>
    private let queue: Atomic<Int>
    private let pendingBytes: Atomic<Int>
    private let stallNanoseconds: Atomic<Int64>
    private let heartbeatNanoseconds: Atomic<Int64>

    public convenience init(_ configuration: DaemonConfiguration) {
        self.init(
            maxLineBytes: configuration.maxLineBytes, maxClients: configuration.maxClients,
            subscriberQueue: configuration.subscriberQueue, maxPendingBytes: configuration.maxPendingBytes,
            stallTimeout: configuration.stallTimeout, heartbeatInterval: configuration.heartbeatInterval)
    }

    /// The defaults of §8 for whatever is not given.
    public init(
        maxLineBytes: Int = 1 << 20, maxClients: Int = 1024, subscriberQueue: Int = 4096,
        maxPendingBytes: Int = 8 << 20, stallTimeout: Duration = .seconds(60),
        heartbeatInterval: Duration = .seconds(30)
    ) {
        lineBytes = Atomic(maxLineBytes)
        clients = Atomic(maxClients)
        queue = Atomic(subscriberQueue)
        pendingBytes = Atomic(maxPendingBytes)
        stallNanoseconds = Atomic(Self.nanoseconds(stallTimeout))
        heartbeatNanoseconds = Atomic(Self.nanoseconds(heartbeatInterval))
    }

    /// Takes every value of a reloaded configuration.
    public func apply(_ configuration: DaemonConfiguration) {
        lineBytes.store(configuration.maxLineBytes, ordering: .relaxed)
        clients.store(configuration.maxClients, ordering: .relaxed)
        queue.store(configuration.subscriberQueue, ordering: .relaxed)
        pendingBytes.store(configuration.maxPendingBytes, ordering: .relaxed)
        stallNanoseconds.store(Self.nanoseconds(configuration.stallTimeout), ordering: .relaxed)
        heartbeatNanoseconds.store(Self.nanoseconds(configuration.heartbeatInterval), ordering: .relaxed)
    }

    /// `socket.max_line_bytes`
    public var maxLineBytes: Int { lineBytes.load(ordering: .relaxed) }
    /// `socket.max_clients`
    public var maxClients: Int { clients.load(ordering: .relaxed) }
    /// `socket.subscriber_queue`
    public var subscriberQueue: Int { max(1, queue.load(ordering: .relaxed)) }
    /// `socket.max_pending_bytes`
    public var maxPendingBytes: Int { pendingBytes.load(ordering: .relaxed) }
    /// `socket.stall_timeout_s`
    public var stallTimeout: Duration { .nanoseconds(stallNanoseconds.load(ordering: .relaxed)) }
    /// `socket.heartbeat_s`
    public var heartbeatInterval: Duration { .nanoseconds(heartbeatNanoseconds.load(ordering: .relaxed)) }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
