import SceneSyncCore

/// What a connection's channel handler hands the engine. Both run on the engine's loop, so each input is handled in
/// the call, and its answer is there when the call returns.
extension Engine {
    /// The outbox of a connection just accepted.
    func newOutbox() -> Outbox {
        handleNow { .newOutbox(reply: $0) }
    }

    /// Registers a connection whose peer is known; `close` closes its channel. Returns its ID.
    func register(outbox: Outbox, credentials: PeerCredentials?, close: @escaping @Sendable () -> Void) -> UInt64 {
        handleNow { .connectionOpened(outbox: outbox, credentials: credentials, close: close, reply: $0) }
    }

    /// See ``EngineCore/serve(_:connection:outbox:resume:)``.
    func serve(
        _ requests: ArraySlice<InboundRequest>, connection: UInt64, outbox: Outbox,
        resume: @escaping @Sendable (Int) -> Void
    ) -> Int? {
        handleNow { .requests(requests, connection: connection, outbox: outbox, resume: resume, reply: $0) }
    }

    /// The connection's channel is gone.
    func unregister(connection: UInt64) {
        handleNow(.connectionClosed(connection))
    }

    /// The next chunk of a subscription's catch-up, `nil` once there is none.
    func nextCatchUpChunk(subscription: UInt64) -> (lines: [UInt8], events: Int, isLast: Bool)? {
        handleNow { .catchUpChunk(subscription: subscription, reply: $0) }
    }

    /// A subscription's writer reached its lag marker: resync it.
    func resyncLagged(subscription: UInt64) {
        handleNow(.lagged(subscription: subscription))
    }
}
