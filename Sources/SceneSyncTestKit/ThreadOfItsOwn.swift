import SceneSyncThreads

/// Runs `work` on a new thread of its own and waits for it without holding a thread: blocking or long work on a
/// thread of the cooperative pool (one per core) would starve the tests running beside it.
public func onThreadOfItsOwn<Value: Sendable>(
    named name: String, _ work: @escaping @Sendable () throws -> Value
) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let run: @Sendable () -> Void = { continuation.resume(with: Result { try work() }) }
        if PosixThread.detached(named: name, run) != 0 { run() }
    }
}
