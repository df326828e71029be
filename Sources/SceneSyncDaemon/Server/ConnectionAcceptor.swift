import Logging
import NIOCore
import SceneSyncThreads
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Accepts the control socket's connections on a thread of its own and hands each burst of them to the engine loop
/// in one job.
///
/// NIO's server channel accepts without ever showing a connection's descriptor, and the writer needs it to write a
/// delivery with one `send(2)` instead of through the channel's pipeline, promise and pending-write queue (see
/// ``ConnectionHandler``): on a loop that writes a change to a hundred subscribers, that is most of what the loop
/// does. Accepting is rare, so the thread costs nothing on any path a change takes; it waits in `poll(2)` for a
/// connection or for ``stop()``.
final class ConnectionAcceptor: Sendable {
    private let listeningFD: Int32
    /// A pipe whose write end ``stop()`` writes to, to wake the thread waiting on its read end.
    private let stopPipe: (read: Int32, write: Int32)
    /// Set by ``stop()`` before it writes to the pipe: checked before each `accept`, so that clients connecting
    /// faster than they are accepted cannot keep the thread from seeing the stop.
    private let stopping = Atomic<Bool>(false)
    private let ended: EventLoopPromise<Void>
    private let logger: Logger
    /// Each accepted descriptor, close-on-exec, in a batch; the callee owns them.
    private let accepted: @Sendable ([Int32]) -> Void
    /// One "cannot accept" warning per 10 s: a process out of descriptors would otherwise log ten times a second.
    private let warnings = ClientLogLimiter(LogRateLimit(burst: 1, interval: .seconds(10)))

    /// How long the thread leaves the socket alone after the process or the system ran out of descriptors or
    /// memory: the connection stays in the backlog, and accepting again at once would spin.
    static let retryAfterExhaustion: Int32 = 100

    private init(
        listeningFD: Int32, stopPipe: (read: Int32, write: Int32), eventLoop: any EventLoop, logger: Logger,
        accepted: @escaping @Sendable ([Int32]) -> Void
    ) {
        self.listeningFD = listeningFD
        self.stopPipe = stopPipe
        self.ended = eventLoop.makePromise()
        self.logger = logger
        self.accepted = accepted
    }

    deinit {
        // Not when the thread ends: a later ``stop()`` would write to a descriptor number reused meanwhile.
        close(stopPipe.read)
        close(stopPipe.write)
    }

    /// Starts accepting on `listeningFD` (non-blocking), which stays the caller's to close once ``ended`` completed.
    static func start(
        listeningFD: Int32, eventLoop: any EventLoop, logger: Logger,
        accepted: @escaping @Sendable ([Int32]) -> Void
    ) throws(SystemError) -> ConnectionAcceptor {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemError("pipe", "control socket acceptor") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let acceptor = ConnectionAcceptor(
            listeningFD: listeningFD, stopPipe: (ends[0], ends[1]), eventLoop: eventLoop, logger: logger,
            accepted: accepted)
        let started = PosixThread.detached(named: "ssd-accept") { acceptor.run() }
        guard started == 0 else {
            let error = SystemError("pthread_create", "control socket acceptor", errno: started)
            acceptor.ended.fail(error)
            throw error
        }
        return acceptor
    }

    /// Completes once the thread stopped accepting: after ``stop()``, or failed when accepting failed for good.
    var finished: EventLoopFuture<Void> { ended.futureResult }

    /// Stops accepting. Connections accepted before are still handed on.
    func stop() {
        stopping.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        // The pipe is nearly empty (one byte per stop), so only a signal can interrupt the write.
        while write(stopPipe.write, &byte, 1) < 0, errno == EINTR {}
    }

    private func run() {
        var waitingOutExhaustion = false
        while true {
            var fds = [
                pollfd(fd: waitingOutExhaustion ? -1 : listeningFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopPipe.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, waitingOutExhaustion ? Self.retryAfterExhaustion : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return end(SystemError("poll", "control socket"))
            }
            if fds[1].revents != 0 { return end(nil) }
            waitingOutExhaustion = false
            switch acceptAll() {
            case .drained:
                break
            case .exhausted(let error):
                waitingOutExhaustion = true
                warn(error)
            case .failed(let error):
                return end(error)
            }
        }
    }

    private enum Outcome {
        case drained
        case exhausted(SystemError)
        case failed(SystemError)
    }

    /// Accepts every connection the kernel holds, handing them on in batches.
    private func acceptAll() -> Outcome {
        var batch: [Int32] = []
        defer { if !batch.isEmpty { accepted(batch) } }
        while !stopping.load(ordering: .acquiring) {
            // `accept`, not `accept4`, which Swift's Glibc module does not declare: the daemon never executes a
            // program, so setting close-on-exec after it opens no window, and NIO makes the socket non-blocking.
            let fd = accept(listeningFD, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                batch.append(fd)
                if batch.count == 64 {
                    accepted(batch)
                    batch = []
                }
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK:
                return .drained
            case EINTR, ECONNABORTED, EPROTO, EPERM:
                // The one connection is gone or was refused by a security module: the next one may be fine.
                continue
            case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                return .exhausted(SystemError("accept", "control socket"))
            default:
                return .failed(SystemError("accept", "control socket"))
            }
        }
        return .drained
    }

    private func warn(_ error: SystemError) {
        warnings.log(
            logger, level: .warning, "cannot accept a client; trying again shortly",
            metadata: [
                "error": "\(error)", "hint": "raise the open-file limit (LimitNOFILE=) or lower socket.max_clients",
            ])
    }

    private func end(_ error: SystemError?) {
        if let error { ended.fail(error) } else { ended.succeed() }
    }
}
