/// How long a ``ResilientSubscription`` waits between connection attempts.
///
/// Exponential, so a daemon that is down for long is not hammered, with a low start so that a quick restart (the
/// common case: `systemctl restart`) is picked up at once, and with jitter so that many clients do not reconnect in
/// lockstep.
public struct ReconnectBackoff: Sendable, Equatable {
    /// The wait after the first failed attempt.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration
    /// Each wait is this many times the previous one, up to ``maximum``.
    public var multiplier: Double
    /// Each wait is varied by up to this fraction either way.
    public var jitter: Double

    /// The defaults start at 50 ms and level off at 2 s: a restarted daemon is found within moments, an absent
    /// one costs a connection attempt every two seconds.
    public init(
        initial: Duration = .milliseconds(50), maximum: Duration = .seconds(2), multiplier: Double = 2,
        jitter: Double = 0.2
    ) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The wait before attempt `attempt + 1` (attempt 0 is the first retry).
    public func delay(attempt: Int) -> Duration {
        let initialSeconds = seconds(initial)
        let maximumSeconds = seconds(maximum)
        var base = initialSeconds
        var step = 0
        while step < attempt, base < maximumSeconds {
            base *= multiplier
            step += 1
        }
        base = min(base, maximumSeconds)
        let factor = jitter > 0 ? Double.random(in: (1 - jitter)...(1 + jitter)) : 1
        return .nanoseconds(Int64(max(0, base * factor) * 1e9))
    }

    private func seconds(_ duration: Duration) -> Double {
        let components = duration.components
        return Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
