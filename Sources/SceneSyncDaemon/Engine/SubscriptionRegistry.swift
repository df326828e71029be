import SceneSyncCore

/// The engine's clients, what each one subscribed to, and the catch-ups still owed to them.
///
/// A value with no I/O and no clock: it knows who receives an event (``forEachRecipient(of:_:)``), and the engine
/// hands the event to their connections. Which events go out, and when, stays the engine's decision.
struct SubscriptionRegistry {
    /// One subscription: the patterns it matches and the outbox of its connection.
    struct Subscription {
        var id: UInt64
        var connection: UInt64
        var patterns: [ScenePattern]
        let outbox: Outbox

        func matches(_ scene: SceneID) -> Bool { patterns.contains { $0.matches(scene) } }
    }

    /// One client connection, as the engine sees it.
    struct Connection: Sendable {
        let id: UInt64
        let outbox: Outbox
        let credentials: PeerCredentials?
        /// Closes the connection (stall timeout, shutdown).
        let close: @Sendable () -> Void
        var clientName: String? = nil
    }

    private(set) var connections: [UInt64: Connection] = [:]
    private(set) var subscriptions: [UInt64: Subscription] = [:]
    /// The subscriptions by the scenes they name, kept in step with `subscriptions`.
    private var index = SubscriptionIndex<Outbox>()
    private var nextSubscriptionID: UInt64 = 1
    private var nextConnectionID: UInt64 = 1
    /// Pending catch-ups (the `state` events of a subscribe or resync), oldest first per subscription: each walks
    /// the store as it was when the catch-up was queued, and is written a chunk at a time (``nextCatchUpChunk``).
    private var catchUps: [UInt64: [CatchUp]] = [:]

    // MARK: - Connections

    mutating func register(
        outbox: Outbox, credentials: PeerCredentials?, close: @escaping @Sendable () -> Void
    ) -> UInt64 {
        let id = nextConnectionID
        nextConnectionID += 1
        connections[id] = Connection(id: id, outbox: outbox, credentials: credentials, close: close)
        return id
    }

    /// Forgets the connection with its subscriptions and their catch-ups.
    mutating func unregister(connection: UInt64) {
        connections[connection] = nil
        for (id, subscription) in subscriptions where subscription.connection == connection {
            subscriptions[id] = nil
            catchUps[id] = nil
            index.remove(id, patterns: subscription.patterns)
        }
    }

    mutating func setClientName(_ name: String?, connection: UInt64) {
        connections[connection]?.clientName = name
    }

    /// The connections whose output has not moved for `timeout`: a client that stopped reading.
    func stalled(timeout: Duration, now: ContinuousClock.Instant) -> [Connection] {
        connections.values.filter { $0.outbox.isStalled(timeout: timeout, now: now) }
    }

    /// How many subscriptions are behind a lag marker now.
    var laggingCount: Int { connections.values.reduce(0) { $0 + $1.outbox.laggingCount } }

    // MARK: - Subscriptions

    /// A new subscription of a registered connection; `nil` when the connection is gone.
    mutating func subscribe(connection: UInt64, patterns: [ScenePattern]) -> Subscription? {
        guard let context = connections[connection] else { return nil }
        let id = nextSubscriptionID
        nextSubscriptionID += 1
        let subscription = Subscription(id: id, connection: connection, patterns: patterns, outbox: context.outbox)
        subscriptions[id] = subscription
        index.insert(id, patterns: patterns, payload: context.outbox)
        return subscription
    }

    /// Ends a subscription of `connection` (never another connection's); `nil` when it has none by that ID.
    mutating func unsubscribe(connection: UInt64, subscription id: UInt64) -> Subscription? {
        guard let subscription = subscriptions[id], subscription.connection == connection else { return nil }
        subscriptions[id] = nil
        catchUps[id] = nil
        index.remove(id, patterns: subscription.patterns)
        return subscription
    }

    /// Calls `body` with every subscription that matches `scene`, or with every subscription when `scene` is `nil`,
    /// each once, in ascending ID order: the order in which a connection's subscriptions get one event is the same
    /// on every run, not the dictionary's. Costs the scene's own subscribers and the wildcard ones, not a pattern
    /// test per subscription (``SubscriptionIndex``).
    func forEachRecipient(of scene: SceneID?, _ body: (Recipient) -> Void) {
        if let scene {
            index.forEachMatch(of: scene, body)
        } else {
            index.forEachSubscription(body)
        }
    }

    /// A subscription an event goes to: its ID and its connection's outbox, as the index keeps them.
    typealias Recipient = SubscriptionIndex<Outbox>.Entry

    // MARK: - Catch-ups

    /// Keeps a catch-up of the `state` events of every scene of `frozen` that the subscription matches: the engine
    /// queues its marker in the connection's outbox, and the connection's writer asks for the events a chunk at a
    /// time (``nextCatchUpChunk(subscription:)``).
    mutating func queueCatchUp(_ subscription: Subscription, of frozen: SceneStore) {
        catchUps[subscription.id, default: []].append(CatchUp(frozen: frozen))
    }

    /// The next `state` lines of the subscription's oldest catch-up, about ``CatchUp/chunkBytes`` at a time, how many
    /// events they hold, and whether they are its last (it is then forgotten, and the next call serves the next
    /// marker's); `nil` when the subscription is gone.
    mutating func nextCatchUpChunk(subscription id: UInt64) -> (lines: [UInt8], events: Int, isLast: Bool)? {
        guard var queue = catchUps[id], !queue.isEmpty, let subscription = subscriptions[id] else {
            catchUps[id] = nil
            return nil
        }
        var catchUp = queue[0]
        var lines: [UInt8] = []
        var events = 0
        var scanned = 0
        while catchUp.next < catchUp.frozen.count, lines.count < CatchUp.chunkBytes, scanned < CatchUp.chunkScenes {
            let scene = catchUp.frozen.scene(atOffset: catchUp.next)
            catchUp.next += 1
            scanned += 1
            guard subscription.matches(scene.id) else { continue }
            EventName.state.linePrefix.withUTF8Buffer { lines.append(contentsOf: $0) }
            JSONWriter.appendUInt(id, to: &lines)
            lines.append(UInt8(ascii: ","))
            Wire.appendSceneMembers(scene, to: &lines)
            lines.append(literal: "}\n")
            events += 1
        }
        if catchUp.next >= catchUp.frozen.count {
            queue.removeFirst()
            catchUps[id] = queue.isEmpty ? nil : queue
            return (lines, events, true)
        }
        queue[0] = catchUp
        catchUps[id] = queue
        return (lines, events, false)
    }
}

/// One pending catch-up: the store as it was when the catch-up was queued, and how far it has been written.
struct CatchUp {
    /// A copy of the store: copy-on-write, so it costs nothing until the live store next changes, and then one copy
    /// of the entry table (not of the scenes' elements, which are shared).
    let frozen: SceneStore
    var next = 0

    /// About how much one chunk holds before it is handed to the socket.
    static let chunkBytes = 64 * 1024
    /// How many scenes one engine turn looks at, so that a narrow pattern over many scenes cannot hold the engine.
    static let chunkScenes = 4096
}
