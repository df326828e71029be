/// Which revisions may be handed out, as a value: the durably reserved high-water mark, the one reservation being
/// written, and who waits for it. No I/O, no clock, no tasks (`RevisionReservationTests` checks every schedule).
///
/// A revision is handed out only once the state directory durably holds a mark at or above it, so a crash never
/// lets the next run hand it out again (SPEC §4). Writing the mark is an fsync: the next block is therefore reserved
/// ahead, once the current one is half used, while changes keep flowing on the revisions already reserved. Only a
/// burst that outruns a whole block, or a state directory that cannot be written, makes a change wait.
struct RevisionReservation<Waiter> {
    /// What the shell must do before it hands out revisions.
    enum Preparation {
        /// The revisions are reserved: hand them out now. Start writing `reserveAhead` first, if set.
        case ready(reserveAhead: UInt64?)
        /// They are not: start writing `reserve`, if set (otherwise one is under way), then ``wait(_:)`` for it.
        case mustWait(reserve: UInt64?)
    }

    /// How many revisions one write reserves.
    let block: UInt64
    /// Revisions up to this one are durably reserved.
    private(set) var durable: UInt64
    /// The mark being written, if one is.
    private(set) var writing: UInt64? = nil
    private var waiters: [Waiter] = []
    /// Why the last write failed, until one succeeds: the reason a merge that could not wait is deferred.
    private(set) var lastFailure: String? = nil

    init(durable: UInt64, block: UInt64) {
        precondition(block > 0, "a revision block holds at least one revision")
        self.durable = durable
        self.block = block
    }

    /// Whether the `count` revisions after `revision` are durably reserved.
    func covers(_ count: Int, after revision: UInt64) -> Bool {
        revision + UInt64(count) <= durable
    }

    /// The shell is about to hand out the `count` revisions after `revision`.
    mutating func prepare(_ count: Int, after revision: UInt64) -> Preparation {
        let target = revision + UInt64(count)
        // Past half of the reserved block, the next one is written unless a write is under way; after a failed
        // write, only once the block is used up, so that a failing state directory is not tried at every step.
        let due = target > durable || (lastFailure == nil && target + block / 2 >= durable)
        var start: UInt64? = nil
        if writing == nil, due {
            let mark = max(durable, target) + block
            writing = mark
            start = mark
        }
        return target <= durable ? .ready(reserveAhead: start) : .mustWait(reserve: start)
    }

    /// Waits for the write under way, after ``prepare(_:after:)`` said ``Preparation/mustWait(reserve:)``.
    ///
    /// - Returns: `false` when no write is under way any more: the shell's `await` can let other work run between
    ///   the two calls, the write's completion among it. Its outcome is then known (``durable``, ``lastFailure``),
    ///   and the caller goes on as if it had waited.
    mutating func wait(_ waiter: Waiter) -> Bool {
        guard writing != nil else { return false }
        waiters.append(waiter)
        return true
    }

    /// The write of `mark` finished. Returns everyone who waited for it, to be resumed (they prepare again).
    mutating func finished(_ mark: UInt64, failure: String?) -> [Waiter] {
        guard writing == mark else {
            let current = writing.map { "r\($0)" } ?? "none"
            preconditionFailure("a reservation of r\(mark) finished while \(current) was being written")
        }
        writing = nil
        if let failure {
            lastFailure = failure
        } else {
            lastFailure = nil
            durable = max(durable, mark)
        }
        defer { waiters = [] }
        return waiters
    }
}
