extension MirrorState {
    /// The first `synced`, which ``SceneSyncSession/path(_:as:)`` waits for: until then the mirror reports nothing,
    /// since its first value is its initial state, and a scene it cannot decode fails the wait instead.
    struct Readiness {
        var ready = false
        var initialFailure: (any Error)?
        var waiter: CheckedContinuation<Void, any Error>?

        /// The waiting task, at most once: whoever takes it resumes it outside the lock.
        mutating func takeWaiter() -> CheckedContinuation<Void, any Error>? {
            defer { waiter = nil }
            return waiter
        }
    }
}
