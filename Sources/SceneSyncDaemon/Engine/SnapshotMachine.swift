import SceneSyncCore

/// When snapshots are written, as a value: triggers and finished writes in, the next write out. No I/O, no clock,
/// no tasks, so every schedule of triggers can be checked on its own (`SnapshotMachineTests`).
///
/// At most one write runs at a time. Triggers that arrive while one runs share the next write, so a burst of
/// triggers during a slow write costs exactly one more write, never one each, and never a write that misses a
/// trigger's changes (the next write starts after them). The first trigger of a batch names its reason.
struct SnapshotMachine<Waiter> {
    /// A batch of triggers: the reason of its first one, and everyone waiting for its outcome.
    struct Batch {
        var reason: Snapshot.Reason
        var waiters: [Waiter]
    }

    enum State {
        case idle
        /// `writing` is being written; `next` collects the triggers that arrived meanwhile.
        case writing(Batch, next: Batch?)
    }

    /// What the shell must do after an input.
    enum Action {
        /// Start writing a snapshot for this reason, then report ``written()``.
        case write(Snapshot.Reason)
        /// Nothing: a write is under way and will be followed by one for this trigger.
        case wait
    }

    private(set) var state = State.idle

    /// Whether a write is under way.
    var isWriting: Bool {
        if case .writing = state { return true }
        return false
    }

    /// A trigger, with whoever waits for its outcome.
    mutating func trigger(_ reason: Snapshot.Reason, waiter: Waiter) -> Action {
        switch state {
        case .idle:
            state = .writing(Batch(reason: reason, waiters: [waiter]), next: nil)
            return .write(reason)
        case .writing(let current, var next):
            next =
                next.map { Batch(reason: $0.reason, waiters: $0.waiters + [waiter]) }
                ?? Batch(reason: reason, waiters: [waiter])
            state = .writing(current, next: next)
            return .wait
        }
    }

    /// The write under way finished. Returns its waiters, to be told its outcome, and the next write, if triggers
    /// arrived meanwhile.
    mutating func written() -> (waiters: [Waiter], next: Snapshot.Reason?) {
        guard case .writing(let current, let next) = state else {
            preconditionFailure("a snapshot write finished while none was under way")
        }
        if let next {
            state = .writing(next, next: nil)
            return (current.waiters, next.reason)
        }
        state = .idle
        return (current.waiters, nil)
    }
}
