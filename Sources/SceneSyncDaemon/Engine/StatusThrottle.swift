/// When the systemd status line may go out: at most once per interval, the first change at once and the ones that
/// follow within the interval as one trailing update when it ends, so the line is never more than that interval
/// behind.
///
/// Each update is a datagram to systemd (a socket, a `sendto` and a `close` on the owner loop, and a wake-up of
/// PID 1), while the line changes with every accepted change. A value: the caller passes the time in and performs
/// what it is told.
struct StatusThrottle {
    enum Decision: Equatable {
        /// Send the line now.
        case send
        /// Send it when this instant comes (``flushed()`` then); nothing else until then.
        case flush(at: ContinuousClock.Instant)
        /// Nothing to do: a trailing update is already scheduled.
        case none
    }

    let interval: Duration
    private var sentAt: ContinuousClock.Instant? = nil
    private var flushScheduled = false
    private var lastLine = ""

    init(interval: Duration) {
        self.interval = interval
    }

    /// The line may have changed at `now`; `force` sends at once (after a snapshot, which operators look for
    /// right away).
    mutating func changed(now: ContinuousClock.Instant, force: Bool = false) -> Decision {
        if force { return .send }
        guard !flushScheduled else { return .none }
        guard let sentAt, now - sentAt < interval else { return .send }
        flushScheduled = true
        return .flush(at: sentAt + interval)
    }

    /// The scheduled trailing update is due: send the line now.
    mutating func flushed() {
        flushScheduled = false
    }

    /// The line as it is at `now`, when it is sent: whether it differs from the last one that went out (an
    /// unchanged line is not sent again).
    mutating func send(_ line: String, now: ContinuousClock.Instant) -> Bool {
        sentAt = now
        guard line != lastLine else { return false }
        lastLine = line
        return true
    }
}
