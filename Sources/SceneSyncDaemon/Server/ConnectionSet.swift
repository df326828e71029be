import NIOCore

/// The open connections of one server, on the engine loop: for `socket.max_clients`, and for the shutdown, which
/// closes each one once its output is written or has stalled, and ends when the last one closed.
final class ConnectionSet {
    private var open: [ObjectIdentifier: ConnectionHandler] = [:]
    private var shutdown: (policy: ShutdownClosePolicy, began: ContinuousClock.Instant)? = nil
    private let allClosed: EventLoopPromise<Void>
    private var allClosedDone = false

    init(eventLoop: any EventLoop) {
        allClosed = eventLoop.makePromise()
    }

    /// Counts the connection in, unless `limit` are open already.
    func admit(_ handler: ConnectionHandler, limit: Int) -> Bool {
        guard open.count < limit else { return false }
        open[ObjectIdentifier(handler)] = handler
        if let shutdown { handler.closeOnceStalled(policy: shutdown.policy, began: shutdown.began) }
        return true
    }

    func remove(_ handler: ConnectionHandler) {
        open[ObjectIdentifier(handler)] = nil
        completeIfDone()
    }

    /// The shutdown began: every connection closes once its output is written or has stalled (``ShutdownClosePolicy``).
    func beginShutdown(policy: ShutdownClosePolicy) {
        let began = ContinuousClock.now
        shutdown = (policy, began)
        for handler in open.values { handler.closeOnceStalled(policy: policy, began: began) }
        completeIfDone()
    }

    /// Closes every connection at once (the server was cancelled).
    func closeAll() {
        for handler in open.values { handler.context?.close(promise: nil) }
    }

    /// Completes once the shutdown began and no connection is open.
    var closed: EventLoopFuture<Void> { allClosed.futureResult }

    private func completeIfDone() {
        guard shutdown != nil, open.isEmpty, !allClosedDone else { return }
        allClosedDone = true
        allClosed.succeed()
    }
}
