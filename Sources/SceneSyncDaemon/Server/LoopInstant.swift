/// A reading of `ContinuousClock`, as nanoseconds from a fixed instant of this process: the time the connections'
/// output keeps (when a batch was queued, when the socket last moved).
///
/// `ContinuousClock.Instant` is a type of the standard library, whose layout this module does not see: each copy,
/// store or test of an optional one went through the runtime's generic value witnesses. A connection's output keeps
/// several per batch, and with a hundred subscribers that machinery was a sixth of what a paced change cost. This is
/// an `Int64`, converted at the few places where a `ContinuousClock.Instant` comes in or goes out.
struct LoopInstant: Comparable, Hashable, Sendable {
    var nanoseconds: Int64

    init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    init(_ instant: ContinuousClock.Instant) {
        let (seconds, attoseconds) = (instant - Self.origin).components
        nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    static var now: LoopInstant { LoopInstant(ContinuousClock.now) }

    /// The same moment as a `ContinuousClock.Instant`.
    var instant: ContinuousClock.Instant { Self.origin + .nanoseconds(nanoseconds) }

    /// Where this process's readings count from.
    private static let origin = ContinuousClock.now

    static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    static func - (lhs: LoopInstant, rhs: LoopInstant) -> Duration { .nanoseconds(lhs.nanoseconds - rhs.nanoseconds) }

    static func + (lhs: LoopInstant, rhs: Duration) -> LoopInstant {
        let (seconds, attoseconds) = rhs.components
        return LoopInstant(nanoseconds: lhs.nanoseconds + seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    static func += (lhs: inout LoopInstant, rhs: Duration) {
        lhs = lhs + rhs
    }
}
