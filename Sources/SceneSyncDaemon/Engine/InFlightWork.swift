/// The engine's work off its own thread that has not reported back yet (a blocking call, a task of the replicator's
/// journal or of a reload), counted as a value. The daemon waits for none of it to be left before it lets the
/// engine go, so a snapshot's scene-file index, a revision mark or a journal line being written is not cut off, as
/// a task group's children would not be; but no task runs the engine's work. No I/O.
struct InFlightWork<Waiter> {
    /// How many pieces of work are off the engine's thread now.
    private(set) var count = 0
    private var idleWaiters: [Waiter] = []

    /// One more piece of work leaves the engine's thread.
    mutating func begin() {
        count += 1
    }

    /// One piece reported back. Returns who waited for none to be left, once none is.
    mutating func end() -> [Waiter] {
        guard count > 0 else { preconditionFailure("work off the engine's thread reported back twice") }
        count -= 1
        guard count == 0 else { return [] }
        defer { idleWaiters = [] }
        return idleWaiters
    }

    /// Waits until no work is off the engine's thread. Returns `false` when none is now: go on at once.
    mutating func whenIdle(_ waiter: Waiter) -> Bool {
        guard count > 0 else { return false }
        idleWaiters.append(waiter)
        return true
    }
}
