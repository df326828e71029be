/// When a connection is closed at shutdown: once its output has not moved for `stall`, or `limit` after the
/// shutdown began, whichever comes first. Under load a subscriber can need more than a moment for a backlog of
/// `subscriber_queue` events, and it should still get its `shutdown` event, while the exit never waits on a client
/// that stopped reading (and stays well within systemd's `TimeoutStopSec`).
///
/// A value with the time passed in, so that the decision is tested without a daemon or a clock.
public struct ShutdownClosePolicy: Sendable, Equatable {
    public var stall: Duration = .seconds(2)
    public var limit: Duration = .seconds(10)

    public init(stall: Duration = .seconds(2), limit: Duration = .seconds(10)) {
        self.stall = stall
        self.limit = limit
    }

    /// Test builds under test hooks take `SCENESYNC_TEST_SHUTDOWN_STALL_MS` and `SCENESYNC_TEST_SHUTDOWN_LIMIT_MS`,
    /// so that a test of a stuck client need not wait the real seconds; release builds always use the defaults.
    static func from(environment: [String: String], testHooks: Bool) -> ShutdownClosePolicy {
        var policy = ShutdownClosePolicy()
        guard testHooks else { return policy }
        if let stall = environment["SCENESYNC_TEST_SHUTDOWN_STALL_MS"].flatMap(Int.init) {
            policy.stall = .milliseconds(stall)
        }
        if let limit = environment["SCENESYNC_TEST_SHUTDOWN_LIMIT_MS"].flatMap(Int.init) {
            policy.limit = .milliseconds(limit)
        }
        return policy
    }

    /// Whether the connection whose output is `outbox` is closed `now`, for a shutdown that began at `began`.
    func closes(_ outbox: Outbox, began: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        now >= began + limit || outbox.isStalled(timeout: stall, now: now)
    }
}
