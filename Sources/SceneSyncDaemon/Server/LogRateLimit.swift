/// How many lines of one kind a client can make the daemon log: at most ``burst`` per ``interval``, the rest counted
/// and reported with the next line that is logged, the way journald's `RateLimitIntervalSec=`/`RateLimitBurst=`
/// limit a service. Anyone who can open the socket can cause such lines (a connection that closes at once, a client
/// that stops reading), so without a limit they could flood the journal. A value with the time as an input, so that
/// a test can drive it.
struct LogRateLimit: Sendable, Equatable {
    let burst: Int
    let interval: Duration
    private var windowStart: ContinuousClock.Instant?
    private var logged = 0
    private(set) var suppressed = 0

    init(burst: Int = 5, interval: Duration = .seconds(30)) {
        self.burst = max(1, burst)
        self.interval = interval
    }

    /// What to do with one line at `now`.
    enum Decision: Sendable, Equatable {
        /// Log it, saying first how many lines were left out since the last one logged (0: none).
        case log(suppressedBefore: Int)
        /// Leave it out; it is counted.
        case suppress
    }

    mutating func admit(at now: ContinuousClock.Instant) -> Decision {
        if let start = windowStart, now - start < interval {
            guard logged < burst else {
                suppressed += 1
                return .suppress
            }
        } else {
            windowStart = now
            logged = 0
        }
        logged += 1
        defer { suppressed = 0 }
        return .log(suppressedBefore: suppressed)
    }
}
