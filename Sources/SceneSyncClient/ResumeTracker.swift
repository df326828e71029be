import SceneSyncCore

/// What a ``ResilientSubscription`` knows about how far its consumer's view goes, so that a new connection resumes
/// exactly there.
///
/// The resume point is the clock of the last event after which the consumer's view is complete and gap-free: a
/// `synced`, a `change` outside a catch-up of states, or a `heartbeat` (the daemon queues it behind every change it
/// has already sent to this subscription). Between a `resync` (or the start of an initial state) and its `synced`
/// the view is incomplete, so there is no resume point: a connection lost then must start over with the full state.
struct ResumeTracker: Sendable, Equatable {
    private(set) var resumePoint: Clock?
    /// Whether the consumer has seen any event, so that starting over needs telling (a synthetic resync).
    private(set) var deliveredAnything = false

    init(since: Clock?) {
        resumePoint = since
    }

    mutating func observe(_ event: SceneSyncEvent) {
        switch event {
        case .change(let record):
            if resumePoint != nil { resumePoint = record.clock }
        case .heartbeat(let clock):
            if resumePoint != nil { resumePoint = clock }
        case .synced(let clock):
            resumePoint = clock
        case .resync:
            resumePoint = nil
        case .state, .phase, .snapshot, .warning, .shutdown, .unknown:
            break
        case .disconnected, .reconnected:
            return
        }
        deliveredAnything = true
    }
}
