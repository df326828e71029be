package import NIOCore

extension EventLoopFuture where Value: Sendable {
    /// The value of a promise that is only ever succeeded: the engine's waiters (a `sync` barrier, a revision
    /// reservation, a snapshot, a settle) are answered, never failed, so a failure is a bug of the engine and stops
    /// the daemon rather than being handed to a caller with nothing to do about it.
    package func outcome() async -> Value {
        do {
            return try await get()
        } catch {
            Swift.preconditionFailure("an engine promise that is only ever succeeded failed: \(error)")
        }
    }
}
