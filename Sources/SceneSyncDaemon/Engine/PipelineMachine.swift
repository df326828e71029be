/// The order of the engine's disk work, as a value: file events, client change groups and other hosts' batches in,
/// one step at a time out. No I/O, no clock, no tasks, so every interleaving of inputs and finished steps can be
/// checked on its own (`PipelineMachineTests`).
///
/// Only one step is ever in flight, so the store and the scene files never disagree about what a step may assume.
/// File events go first: they were taken before any change queued after them, and a change must never be decided
/// on, nor written over, an app's write the daemon has not merged (§3). Remote batches come next, one per step,
/// each a transaction of the cluster in database order; the client groups queued so far then commit together.
struct PipelineMachine<Event, Group, Remote, Waiter> {
    /// One step for the shell to perform, then report with ``next()``.
    enum Step {
        /// Merge these file events, in kernel order.
        case mergeFiles([Event])
        /// Apply one batch of other hosts' changes.
        case applyRemote(Remote)
        /// Commit these client groups, in arrival order, as one group commit.
        case commit([Group])
    }

    /// What the shell must do after queuing an input.
    enum Start: Equatable {
        /// The pipeline was idle: start running it (``next()`` until it says `.idle`).
        case start
        /// A step is in flight; the input runs after it.
        case queued
    }

    /// What the shell must do once a step is done (or when it starts running).
    enum Next {
        case perform(Step)
        /// Nothing is left: resume these ``settle(_:)`` waiters.
        case idle([Waiter])
    }

    private(set) var isRunning = false
    private var events: [Event] = []
    private var remotes: [Remote] = []
    private var groups: [Group] = []
    private var waiters: [Waiter] = []

    /// How many inputs wait for a step (file events, remote batches and groups).
    var queuedCount: Int { events.count + remotes.count + groups.count }

    mutating func enqueue(events newEvents: [Event]) -> Start {
        events.append(contentsOf: newEvents)
        return start()
    }

    mutating func enqueue(group: Group) -> Start {
        groups.append(group)
        return start()
    }

    mutating func enqueue(remote: Remote) -> Start {
        remotes.append(remote)
        return start()
    }

    private mutating func start() -> Start {
        guard !isRunning else { return .queued }
        isRunning = true
        return .start
    }

    /// The next step, once the previous one is done: called only while running, that is after ``Start/start`` and
    /// until it answers `.idle`.
    mutating func next() -> Next {
        guard isRunning else { preconditionFailure("the pipeline was asked for a step while it was not running") }
        if !events.isEmpty {
            defer { events = [] }
            return .perform(.mergeFiles(events))
        }
        if !remotes.isEmpty {
            return .perform(.applyRemote(remotes.removeFirst()))
        }
        if !groups.isEmpty {
            defer { groups = [] }
            return .perform(.commit(groups))
        }
        isRunning = false
        defer { waiters = [] }
        return .idle(waiters)
    }

    /// A wait until everything queued so far is done: `true` when that is already so (resume at once), otherwise
    /// the waiter is handed back by the ``next()`` that ends the run.
    mutating func settle(_ waiter: Waiter) -> Bool {
        guard isRunning else { return true }
        waiters.append(waiter)
        return false
    }
}
