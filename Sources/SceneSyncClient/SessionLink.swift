import Synchronization

/// The connection a ``SceneSyncSession`` sends its requests on: opened on first use, reopened with back-off while
/// requests wait for it, and otherwise left closed until the next request, so an idle session costs the daemon
/// nothing.
///
/// One runner task owns the connection (``SceneSyncConnection/withConnection(to:isolation:_:)`` keeps it scoped to
/// that task); requesters only wait for it to be published. Waiting is bounded by the caller's deadline, not here.
final class SessionLink: Sendable {
    let socketPath: String
    let clientName: String?
    let backoff: ReconnectBackoff
    private let state = Mutex(State())

    private struct State: ~Copyable {
        var connection: SceneSyncConnection?
        var runner: Task<Void, Never>?
        var waiters: [UInt64: CheckedContinuation<SceneSyncConnection, any Error>] = [:]
        var nextWaiter: UInt64 = 0
        /// Why the last attempt failed: what a request that times out reports.
        var lastFailure: String?
        var closed = false
    }

    init(socketPath: String, clientName: String?, backoff: ReconnectBackoff) {
        self.socketPath = socketPath
        self.clientName = clientName
        self.backoff = backoff
    }

    /// Why the last connection attempt failed, if it did.
    var lastFailure: String? { state.withLock { $0.lastFailure } }

    /// The open connection, or the next one to open. Throws `CancellationError` when the calling task is cancelled
    /// (its deadline passed) and ``SceneSyncClientError/Code/closed`` after ``close()``.
    func connection() async throws -> SceneSyncConnection {
        let open = state.withLock { state -> SceneSyncConnection? in
            guard !state.closed, let connection = state.connection, !connection.isClosed else { return nil }
            return connection
        }
        if let open { return open }
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<SceneSyncConnection, any Error>? = state.withLock { state in
                    if state.closed { return .failure(SceneSyncClientError(.closed, "the session was closed")) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let connection = state.connection, !connection.isClosed { return .success(connection) }
                    state.waiters[id] = continuation
                    if state.runner == nil { state.runner = Task { await self.run() } }
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// A request found `connection` lost: it is not handed out again, even before the runner notices.
    func dropped(_ connection: SceneSyncConnection) {
        state.withLock { state in
            if state.connection === connection { state.connection = nil }
        }
    }

    /// Ends the connection and fails every waiting request; later requests fail at once.
    func close() {
        let (runner, waiters) = state.withLock { state in
            state.closed = true
            defer { state.waiters = [:] }
            return (state.runner, Array(state.waiters.values))
        }
        runner?.cancel()
        for waiter in waiters { waiter.resume(throwing: SceneSyncClientError(.closed, "the session was closed")) }
    }

    /// Connects, publishes the connection to the waiters and holds it until it ends; then tries again after a
    /// back-off while anyone waits, and stops when nobody does.
    private func run() async {
        var attempt = 0
        while !Task.isCancelled {
            var failure = "the connection ended"
            do {
                try await SceneSyncConnection.withConnection(to: socketPath) { connection in
                    _ = try await connection.hello(client: clientName)
                    attempt = 0
                    let waiters = state.withLock { state in
                        state.connection = connection
                        state.lastFailure = nil
                        defer { state.waiters = [:] }
                        return Array(state.waiters.values)
                    }
                    for waiter in waiters { waiter.resume(returning: connection) }
                    await connection.waitUntilClosed()
                }
            } catch let error as SceneSyncConnectionError {
                failure = error.description
            } catch {
                failure = "\(error)"
            }
            let stop = state.withLock { state in
                state.connection = nil
                state.lastFailure = failure
                guard state.waiters.isEmpty || state.closed else { return false }
                state.runner = nil
                return true
            }
            if stop { return }
            do {
                try await Task.sleep(for: backoff.delay(attempt: attempt))
            } catch {
                break
            }
            attempt += 1
        }
        state.withLock { $0.runner = nil }
    }
}
