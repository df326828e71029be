import NIOCore
import NIOPosix
public import SceneSyncCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to `scenesyncd`'s control socket, with a typed async method for every op of the protocol (docs/protocol.md).
///
/// Open one with ``withConnection(to:isolation:_:)``; the connection lives exactly as long as the closure, so it is
/// always closed, whatever the closure throws, and no task outlives it. Inside, any number of tasks may send requests
/// at once: requests are pipelined (written as they come, without waiting for earlier answers), each answer is
/// matched to its request by id, and events are routed to the ``SceneSyncSubscription`` they belong to. A single reader task
/// owns the socket's inbound side, so events and answers are seen in exactly the order the daemon sent them.
///
/// Errors: the daemon's refusal of a request is thrown as `SceneSyncError` (its `ErrorCode`, message and, for
/// `conflict`, the current scene); everything about the connection itself (no daemon, lost connection, garbage on the
/// socket) as ``SceneSyncConnectionError``.
public final class SceneSyncConnection: Sendable {
    /// The socket this connection was opened on.
    public let socketPath: String
    private let channel: any Channel
    private let router = Mutex(Router())
    private let outgoing: AsyncStream<[UInt8]>.Continuation

    /// Responses and request lines the client accepts at most: far above anything the daemon sends (its scene files
    /// are limited to `scenes.max_file_bytes`), low enough that a peer that is not the daemon cannot exhaust memory.
    public static let maxLineBytes = 512 << 20

    /// Requests one connection sends without their answers yet; one more fails at once with
    /// ``SceneSyncClientError/Code/tooManyRequests`` rather than queueing without bound.
    public static let maxPendingRequests = 65_536

    /// Events a subscription holds for a consumer that has not read them; past this the subscription ends (see
    /// ``SceneSyncSubscription``).
    public static let maxBufferedEvents = 16_384

    private init(socketPath: String, channel: any Channel, outgoing: AsyncStream<[UInt8]>.Continuation) {
        self.socketPath = socketPath
        self.channel = channel
        self.outgoing = outgoing
    }

    /// Connects to the daemon, runs `body` with the connection, and closes it when `body` returns or throws.
    ///
    /// - Parameters:
    ///   - socketPath: The control socket; by default the daemon's default for this user (see ``SceneSyncSocket``).
    ///   - isolation: Where `body` runs: the caller's actor, so that it may use what the caller may.
    ///   - body: Works with the connection. Requests still waiting when it returns fail with
    ///     ``SceneSyncConnectionError/disconnected(reason:)``, and subscriptions end.
    /// - Throws: ``SceneSyncConnectionError/noDaemon(path:reason:)`` when nothing listens at the socket, and
    ///   whatever `body` throws.
    public static func withConnection<Result: Sendable>(
        to socketPath: String = SceneSyncSocket.defaultPath(),
        isolation: isolated (any Actor)? = #isolation,
        _ body: (SceneSyncConnection) async throws -> Result
    ) async throws -> Result {
        let asyncChannel = try await openChannel(socketPath)
        return try await asyncChannel.executeThenClose { inbound, outbound in
            let (lines, outgoing) = AsyncStream.makeStream(of: [UInt8].self)
            let connection = SceneSyncConnection(
                socketPath: socketPath, channel: asyncChannel.channel, outgoing: outgoing)
            return try await withThrowingTaskGroup(of: Void.self, returning: Result.self) { group in
                group.addTask { await connection.readLoop(inbound) }
                group.addTask { await connection.writeLoop(lines, to: outbound) }
                defer {
                    connection.finish(.disconnected(reason: "the connection was closed by the client"))
                    group.cancelAll()
                }
                return try await body(connection)
            }
        }
    }

    /// Sends one request and returns the daemon's successful answer as it came (`{"id":…,"ok":true,…}`).
    ///
    /// The typed methods are built on this; it is public for tools that print answers unchanged (`scenesync
    /// --json`) and for ops a newer daemon may add. Cancelling the calling task abandons the answer (the request may
    /// still take effect).
    /// - Throws: `SceneSyncError` when the daemon refused the request, ``SceneSyncConnectionError`` when the
    ///   connection failed first.
    public func send(_ request: SceneSyncRequest) async throws -> JSONValue {
        try await send(request, events: nil)
    }

    /// Sends a request; `events`, for `subscribe`, receives the subscription's events from the moment the answer is
    /// read, before the reader looks at the next line, so that no event can slip past.
    func send(_ request: SceneSyncRequest, events: EventSink?) async throws -> JSONValue {
        let id = router.withLock { router in
            defer { router.nextID += 1 }
            return router.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                let refusal: (any Error)? = router.withLock { router in
                    if let reason = router.closed { return reason }
                    if router.cancelledBeforeSending.remove(id) != nil { return CancellationError() }
                    // Requests not yet answered are what the outgoing queue and the waiters hold: bounded here.
                    if router.pending.count >= Self.maxPendingRequests {
                        return SceneSyncClientError(
                            .tooManyRequests,
                            "\(Self.maxPendingRequests) requests are already waiting for the daemon on this connection")
                    }
                    router.pending[id] = Pending(continuation: continuation, events: events)
                    // Yielded under the lock, so lines go out in id order.
                    outgoing.yield(request.line(id: id))
                    return nil
                }
                if let refusal { continuation.resume(throwing: refusal) }
            }
        } onCancel: {
            let abandoned = router.withLock { router -> Pending? in
                guard var pending = router.pending[id] else {
                    router.cancelledBeforeSending.insert(id)
                    return nil
                }
                // The entry stays (without a waiter) so that the late answer is recognised and dropped.
                let abandoned = pending
                pending.continuation = nil
                pending.events = nil
                router.pending[id] = pending
                return abandoned
            }
            abandoned?.events?.finish(throwing: CancellationError())
            abandoned?.continuation?.resume(throwing: CancellationError())
        }
    }

    /// Queues a request whose answer nobody waits for (an `unsubscribe` when a subscription's consumer went away).
    func sendWithoutWaiting(_ request: SceneSyncRequest) {
        router.withLock { router in
            guard router.closed == nil else { return }
            let id = router.nextID
            router.nextID += 1
            router.pending[id] = Pending(continuation: nil, events: nil)
            outgoing.yield(request.line(id: id))
        }
    }

    /// Whether the connection has ended: requests on it fail at once.
    var isClosed: Bool { router.withLock { $0.closed != nil } }

    /// Returns once the connection has ended (the daemon closed it, it failed, or the client closed it), or when the
    /// calling task is cancelled: what a long-lived holder of the connection waits on.
    func waitUntilClosed() async {
        let id = router.withLock { router in
            defer { router.nextID += 1 }
            return router.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let done = router.withLock { router in
                    if router.closed != nil || Task.isCancelled { return true }
                    router.closeWaiters[id] = continuation
                    return false
                }
                if done { continuation.resume() }
            }
        } onCancel: {
            router.withLock { $0.closeWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Stops routing a subscription's events and ends its sequence.
    func forget(subscription id: UInt64) {
        let sink = router.withLock { $0.sinks.removeValue(forKey: id) }
        sink?.finish()
    }

    private func writeLoop(_ lines: AsyncStream<[UInt8]>, to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async
    {
        do {
            for await line in lines {
                try await outbound.write(ByteBuffer(bytes: line))
            }
        } catch {
            // The reader ends the connection, not this loop: it may still hold the daemon's last line (an answer
            // without id that refuses the connection), which explains the failure better than the write's error.
            router.withLock { $0.sendFailure = .disconnected(reason: "cannot send: \(error)") }
            channel.close(promise: nil)
        }
    }

    private func readLoop(_ inbound: NIOAsyncChannelInboundStream<[UInt8]>) async {
        var reason = SceneSyncConnectionError.disconnected(reason: "the daemon closed the connection")
        do {
            for try await line in inbound {
                if let violation = receive(line) {
                    reason = violation
                    break
                }
            }
        } catch let error as LineFrameDecoder.LineTooLong {
            reason = .protocolViolation("\(error)")
        } catch {
            reason = .disconnected(reason: "\(error)")
        }
        if case .disconnected = reason, let sendFailure = router.withLock({ $0.sendFailure }) { reason = sendFailure }
        finish(reason)
        channel.close(promise: nil)
    }

    /// Routes one line. Returns the violation that ends the connection, if the line is not the protocol.
    private func receive(_ line: [UInt8]) -> SceneSyncConnectionError? {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return nil }
        let json: JSONValue
        do throws(JSONError) {
            json = try JSONParser.parse(line, maxNesting: Wire.maxLineNesting)
        } catch {
            return .protocolViolation("a line that is not JSON: \(error)")
        }
        guard json.objectValue != nil else { return .protocolViolation("a line that is not a JSON object") }
        if json["event"] != nil { return route(event: json) }
        return route(response: json)
    }

    private func route(event json: JSONValue) -> SceneSyncConnectionError? {
        let event: SceneSyncEvent
        do throws(SceneSyncConnectionError) {
            event = try SceneSyncEvent(json: json)
        } catch {
            return error
        }
        let received = ReceivedEvent(event: event, json: json)
        if let subscription = json["subscription"]?.uint64Value {
            let sink = router.withLock { $0.sinks[subscription] }
            if let sink { deliver(received, to: sink, of: subscription) }
        } else {
            // `shutdown` goes once to the connection: every subscription on it needs to know.
            let sinks = router.withLock { $0.sinks }
            for (subscription, sink) in sinks { deliver(received, to: sink, of: subscription) }
        }
        return nil
    }

    /// Queues an event for a subscription's consumer. A consumer more than ``maxBufferedEvents`` behind ends its
    /// subscription, as the daemon ends a lagging one: what was queued is still read, gap-free, then the sequence
    /// throws, and a ``ResilientSubscription`` resumes from there on a new connection. The client's memory stays
    /// bounded, and the reader of the socket never waits for a consumer.
    private func deliver(_ received: ReceivedEvent, to sink: EventSink, of subscription: UInt64) {
        guard case .dropped = sink.yield(received) else { return }
        router.withLock { _ = $0.sinks.removeValue(forKey: subscription) }
        sink.finish(
            throwing: SceneSyncConnectionError.disconnected(
                reason: "the subscription's consumer fell more than \(Self.maxBufferedEvents) events behind"))
        sendWithoutWaiting(.unsubscribe(subscription))
    }

    private func route(response json: JSONValue) -> SceneSyncConnectionError? {
        guard let ok = json["ok"]?.boolValue else { return .protocolViolation("a response without \"ok\"") }
        let id = json["id"]
        if id == nil || id == .null {
            // The daemon could not tie this answer to a request (it refused the connection, or a line): it belongs
            // to the oldest waiting request, and the daemon closes the connection next.
            let error = ok ? nil : SceneSyncError.decode(json["error"])
            let oldest = router.withLock { router -> Pending? in
                if let error, router.closingError == nil { router.closingError = error }
                guard let first = router.pending.keys.min() else { return nil }
                return router.pending.removeValue(forKey: first)
            }
            if let error {
                oldest?.events?.finish(throwing: error)
                oldest?.continuation?.resume(throwing: error)
            } else {
                oldest?.continuation?.resume(returning: json)
            }
            return nil
        }
        guard let number = id?.uint64Value else { return .protocolViolation("a response with a foreign id") }
        guard ok else {
            let error = SceneSyncError.decode(json["error"])
            let pending = router.withLock { $0.pending.removeValue(forKey: number) }
            pending?.events?.finish(throwing: error)
            pending?.continuation?.resume(throwing: error)
            return nil
        }
        let subscription = json["subscription"]?.uint64Value
        var abandonedSubscription = false
        let pending = router.withLock { router -> Pending? in
            guard let pending = router.pending.removeValue(forKey: number) else { return nil }
            if let subscription {
                if let events = pending.events {
                    router.sinks[subscription] = events
                } else if pending.continuation == nil {
                    abandonedSubscription = true
                }
            }
            return pending
        }
        if abandonedSubscription, let subscription { sendWithoutWaiting(.unsubscribe(subscription)) }
        pending?.continuation?.resume(returning: json)
        return nil
    }

    /// Ends the connection's bookkeeping: every waiting request fails and every subscription ends with `reason`
    /// (or with the error the daemon gave when it refused the connection).
    func finish(_ reason: SceneSyncConnectionError) {
        let (error, pending, sinks): (any Error, [Pending], [EventSink]) = router.withLock { router in
            if router.closed == nil { router.closed = router.closingError.map { $0 as any Error } ?? reason }
            let error = router.closed ?? reason
            let pending = router.pending.sorted { $0.key < $1.key }.map(\.value)
            let sinks = Array(router.sinks.values)
            router.pending = [:]
            router.sinks = [:]
            return (error, pending, sinks)
        }
        let closeWaiters = router.withLock { router in
            defer { router.closeWaiters = [:] }
            return Array(router.closeWaiters.values)
        }
        for waiter in closeWaiters { waiter.resume() }
        outgoing.finish()
        for entry in pending {
            entry.events?.finish(throwing: error)
            entry.continuation?.resume(throwing: error)
        }
        for sink in sinks { sink.finish(throwing: error) }
    }

    typealias EventSink = AsyncThrowingStream<ReceivedEvent, any Error>.Continuation

    /// A request waiting for its answer.
    struct Pending {
        /// `nil` once the caller stopped waiting (cancelled) or for requests nobody waits for.
        var continuation: CheckedContinuation<JSONValue, any Error>?
        /// For `subscribe`: where the subscription's events go.
        var events: EventSink?
    }

    /// Everything the reader, the senders and cancellation share.
    struct Router: ~Copyable {
        var nextID: UInt64 = 1
        var pending: [UInt64: Pending] = [:]
        var sinks: [UInt64: EventSink] = [:]
        /// Requests cancelled before they were queued: they are never sent.
        var cancelledBeforeSending: Set<UInt64> = []
        /// Set once the connection is unusable; later requests fail with it at once.
        var closed: (any Error)?
        /// The error of an answer without id (the daemon refused the connection), which explains the close.
        var closingError: SceneSyncError?
        /// Why a write failed, which explains the close unless the reader finds a better reason.
        var sendFailure: SceneSyncConnectionError?
        /// Tasks in ``SceneSyncConnection/waitUntilClosed()``, keyed by an ID from `nextID`.
        var closeWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }
}
