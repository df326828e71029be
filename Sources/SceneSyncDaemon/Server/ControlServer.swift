public import Logging
import NIOCore
import NIOPosix
import SceneSyncCore
public import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The Unix-socket server of §6, in the shape of swift-nio's `NIOTCPEchoServer`: one task per connection, reading
/// request lines in order and writing through the connection's ``Outbox``.
public struct ControlServer: Service {
    /// Where to listen.
    public enum Listener: Sendable, CustomStringConvertible {
        /// Bind this path with this mode; the file is removed again at exit.
        case path(String, mode: UInt32)
        /// A listening socket passed by systemd; never unlinked.
        case inherited(Int32)

        public var description: String {
            switch self {
            case .path(let path, _): path
            case .inherited(let descriptor): "socket passed by systemd (fd \(descriptor))"
            }
        }
    }

    let engine: SceneEngine
    let listener: Listener
    /// Read at each use: a reload changes them for open connections too.
    let limits: ConnectionLimits
    let logger: Logger
    let onListening: @Sendable () async -> Void
    private let activeConnections = ConnectionCounter()
    /// Lines any client can cause, each kind limited on its own.
    private let credentialWarnings = ClientLogLimiter()

    let shutdownPolicy: ShutdownClosePolicy
    let testFaults: ServerTestFaults

    public init(
        engine: SceneEngine, listener: Listener, limits: ConnectionLimits, logger: Logger,
        shutdownPolicy: ShutdownClosePolicy = ShutdownClosePolicy(), testFaults: ServerTestFaults = ServerTestFaults(),
        onListening: @escaping @Sendable () async -> Void
    ) {
        self.shutdownPolicy = shutdownPolicy
        self.testFaults = testFaults
        self.engine = engine
        self.listener = listener
        self.limits = limits
        self.logger = logger
        self.onListening = onListening
    }

    public func run() async throws {
        let limits = self.limits
        // The connections live on the engine's own loop: a request and the events it causes cross no thread.
        let bootstrap = ServerBootstrap(group: engine.loop.eventLoop)
            .serverChannelOption(.backlog, value: 512)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<NIOAsyncChannel<[InboundLine], ByteBuffer>> = {
            channel in
            channel.eventLoop.makeCompletedFuture {
                try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder(limits: limits)))
                try channel.pipeline.syncOperations.addHandler(LineBatcher())
                // Explicit back-pressure: at most a couple of read bursts wait for the reader, which itself stops
                // while the connection's output is at socket.max_pending_bytes, so NIO stops reading the socket.
                return try NIOAsyncChannel<[InboundLine], ByteBuffer>(
                    wrappingChannelSynchronously: channel,
                    configuration: .init(
                        backPressureStrategy: .init(lowWatermark: 1, highWatermark: 2),
                        isOutboundHalfClosureEnabled: false))
            }
        }
        let server: NIOAsyncChannel<NIOAsyncChannel<[InboundLine], ByteBuffer>, Never>
        var bound: BoundSocket? = nil
        switch listener {
        case .path(let path, let mode):
            (server, bound) = try await ControlServer.bind(
                bootstrap, path: path, mode: mode, childChannelInitializer: initializer)
        case .inherited(let descriptor):
            server = try await bootstrap.bind(descriptor, childChannelInitializer: initializer)
        }
        logger.info("listening", metadata: ["socket": "\(bound?.path ?? "inherited fd")"])
        await onListening()
        let serverChannel = server.channel
        defer {
            // Only a socket we bound ourselves is ours to remove; an inherited one belongs to systemd.
            bound?.remove()
        }
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { inbound in
                    for try await connection in inbound {
                        group.addTask { await self.serve(connection) }
                    }
                }
            }
        } onGracefulShutdown: {
            serverChannel.close(promise: nil)
        }
    }

    /// One connection: a reader that answers requests in order and a writer that drains the outbox.
    private func serve(_ connection: NIOAsyncChannel<[InboundLine], ByteBuffer>) async {
        let channel = connection.channel
        let maxClients = limits.maxClients
        guard activeConnections.admit(limit: maxClients) else {
            // Over the limit: one error line, then close (§6).
            let line = ResponseWriter.error(
                id: ResponseWriter.nullID,
                SceneSyncError(.unavailable, "too many clients (socket.max_clients is \(maxClients))"))
            // The client is turned away either way; one that hung up first needs no reason.
            try? await connection.executeThenClose { _, outbound in
                try await outbound.write(ByteBuffer(bytes: line))
            }
            return
        }
        defer { activeConnections.leave() }
        let credentials: PeerCredentials?
        do {
            credentials = try await ControlServer.peerCredentials(of: channel, fails: testFaults.failPeerCredentials)
        } catch {
            // Fail safe: a peer nobody can name may read, never change.
            credentials = nil
            if ControlServer.peerIsGone(error) {
                // A client that connected and left at once: its socket was closed before its credentials could be
                // read. Nothing is wrong, and anyone who can open the socket can do it in a loop, so it is not a
                // warning. The connection is served as any other; it ends at once.
                logger.debug("a client left before its credentials were read", metadata: ["error": "\(error)"])
            } else {
                credentialWarnings.log(
                    logger, level: .warning, "cannot read a client's credentials (SO_PEERCRED); it may only read",
                    metadata: ["error": "\(error)"])
            }
        }
        let outbox = await engine.newOutbox()
        let id = await engine.register(outbox: outbox, credentials: credentials) { channel.close(promise: nil) }
        do {
            try await withGracefulShutdownHandler {
                try await self.run(connection, id: id, outbox: outbox)
            } onGracefulShutdown: {
                // The server shuts down last, after the engine sent `shutdown` and closed every outbox.
                ControlServer.closeOnceStalled(channel, outbox: outbox, policy: self.shutdownPolicy, began: .now)
            }
        } catch {
            logger.debug("connection ended", metadata: ["connection": "\(id)", "reason": "\(error)"])
        }
        await engine.unregister(connection: id)
    }

    /// Closes the connection at shutdown when `policy` says so, checking every 250 ms. A connection whose writer
    /// drained everything closes itself before that.
    private static func closeOnceStalled(
        _ channel: any Channel, outbox: Outbox, policy: ShutdownClosePolicy, began: ContinuousClock.Instant,
        buffered: NIOLoopBoundBox<Int>? = nil
    ) {
        let buffered = buffered ?? NIOLoopBoundBox.makeBoxSendingValue(Int.max, eventLoop: channel.eventLoop)
        channel.eventLoop.scheduleTask(in: .milliseconds(250)) {
            noteDrain(of: channel, outbox: outbox, buffered: buffered)
            if policy.closes(outbox, began: began, now: .now) {
                channel.close(promise: nil)
            } else if channel.isActive {
                closeOnceStalled(channel, outbox: outbox, policy: policy, began: began, buffered: buffered)
            }
        }
    }

    /// Notes progress when what the channel itself buffers shrank since the last look (`buffered`): the socket took
    /// bytes although the writer handed none on. The writer can hand the channel a whole batch before it turns
    /// unwritable, and then waits (for writability, or in ``flushed(_:outbox:)``) while a slow client reads it.
    /// Runs on the channel's event loop.
    private static func noteDrain(of channel: any Channel, outbox: Outbox, buffered: NIOLoopBoundBox<Int>) {
        // Fails only on a closed channel: nothing drains there, and the caller stops checking an inactive one.
        guard let now = try? channel.syncOptions?.getOption(.bufferedWritableBytes) else { return }
        if now < buffered.value { outbox.noteProgress() }
        buffered.value = now
    }

    private func run(
        _ connection: NIOAsyncChannel<[InboundLine], ByteBuffer>, id: UInt64, outbox: Outbox
    ) async throws {
        try await connection.executeThenClose { inbound, outbound in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    // However the reader ends (EOF, half-close, error), the writer still drains what is queued.
                    defer { outbox.close() }
                    try await self.read(inbound, connection: id, outbox: outbox)
                }
                // The writer decides when the connection is done: once the outbox is closed and drained (the
                // reader finished, or shutdown) or the peer is gone. Only then is the reader stopped; closing the
                // outbox also releases a reader waiting for room, which cancellation alone would not wake.
                defer {
                    outbox.close()
                    group.cancelAll()
                }
                try await self.write(outbox, to: outbound)
            }
            // Before `executeThenClose` closes the channel: the socket must have taken the last byte.
            try await ControlServer.flushed(connection.channel, outbox: outbox)
        }
    }

    /// Parses each batch of lines here, off the engine, then has the engine serve the batch in order in one turn
    /// (see ``LineBatcher``).
    private func read(
        _ inbound: NIOAsyncChannelInboundStream<[InboundLine]>, connection: UInt64, outbox: Outbox
    ) async throws {
        for try await batch in inbound {
            var requests: [InboundRequest] = []
            requests.reserveCapacity(batch.count)
            var tooLong = false
            for item in batch {
                guard case .line(let bytes) = item else {
                    tooLong = true
                    break
                }
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                switch Command.parse(bytes) {
                case .failure(let failure):
                    requests.append(.answer(ResponseWriter.error(id: failure.id, failure.error)))
                case .success(let request):
                    requests.append(.request(request))
                }
            }
            var rest = requests[...]
            while !rest.isEmpty {
                // A connection at its output bound is not read from (§6): nothing more is served, or read from the
                // socket, until its client takes some of what is pending.
                if !outbox.hasRoom { await outbox.waitForRoom() }
                if outbox.isClosed { return }
                if rest.contains(where: { if case .request = $0 { true } else { false } }) {
                    rest = rest.dropFirst(await engine.serve(rest, connection: connection, outbox: outbox))
                } else {
                    for case .answer(let line) in rest { outbox.enqueue(line: line) }
                    rest = []
                }
            }
            if tooLong {
                outbox.enqueue(
                    line: ResponseWriter.error(
                        id: ResponseWriter.nullID,
                        SceneSyncError(
                            .tooLarge, "request line longer than socket.max_line_bytes (\(limits.maxLineBytes))")))
                return
            }
            if !outbox.hasRoom { await outbox.waitForRoom() }
        }
    }

    private func write(_ outbox: Outbox, to outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>) async throws {
        var buffer = ByteBuffer()
        while let items = await outbox.next() {
            buffer.clear()
            var events = 0
            for item in items {
                switch item {
                case .lagged(let subscription):
                    // Everything before the marker goes out first; the resync then queues behind it.
                    if buffer.readableBytes > 0 {
                        try await outbound.write(buffer)
                        buffer.clear()
                        outbox.noteProgress()
                    }
                    await engine.resyncLagged(subscription: subscription)
                    continue
                case .catchUp(let subscription):
                    // The `state` events are made a chunk at a time, each written (and taken by the socket, which
                    // the outbound writer waits for) before the next is made.
                    while let chunk = await engine.nextCatchUpChunk(subscription: subscription) {
                        buffer.writeBytes(chunk.lines)
                        events += chunk.events
                        if buffer.readableBytes >= ControlServer.writeChunk {
                            try await outbound.write(buffer)
                            buffer = ByteBuffer()
                            outbox.noteProgress()
                        }
                        if chunk.isLast { break }
                    }
                    continue
                case .event:
                    events += 1
                case .line:
                    break
                }
                item.write(to: &buffer)
                if buffer.readableBytes >= ControlServer.writeChunk {
                    try await outbound.write(buffer)
                    buffer = ByteBuffer()
                    outbox.noteProgress()
                }
            }
            if buffer.readableBytes > 0 { try await outbound.write(buffer) }
            outbox.wrote()
            outbox.counters.delivered(events)
        }
    }

    /// Waits until the socket has taken everything the writer handed to the channel. `write` on the outbound
    /// writer returns once the channel has the bytes, not the socket, and a writer that was just unblocked can hand
    /// on a whole batch before the channel turns unwritable; `executeThenClose` then closes the channel and NIO
    /// drops what it still buffers (swift-nio#2795). The last lines of a connection (the `shutdown` event, the
    /// answers before a client's half-close) would be lost to a client that reads slowly. An empty write completes
    /// after every write before it, as Netty's close-on-flush does. Meanwhile the output is pending, and each drop
    /// in what the channel buffers is progress: a client that keeps reading keeps its connection, one that stops is
    /// closed by the stall timeout (or at shutdown), which ends the wait.
    private static func flushed(_ channel: any Channel, outbox: Outbox) async throws {
        outbox.awaitFlush()
        let eventLoop = channel.eventLoop
        let flush = eventLoop.makePromise(of: Void.self)
        channel.writeAndFlush(ByteBuffer(), promise: flush)
        let done = flush.futureResult
        let buffered = NIOLoopBoundBox.makeBoxSendingValue(Int.max, eventLoop: eventLoop)
        let progress = eventLoop.scheduleRepeatedTask(initialDelay: .milliseconds(100), delay: .milliseconds(100)) {
            _ in noteDrain(of: channel, outbox: outbox, buffered: buffered)
        }
        done.whenComplete { _ in progress.cancel() }
        try await done.get()
        outbox.wrote()
    }

    /// Largest write the writer assembles before handing it on. A backlog of a thousand events is a third of a
    /// megabyte; buffers that size come from fresh zeroed pages (above malloc's mmap threshold) on every batch,
    /// while 64 KiB ones are reused from the heap.
    static let writeChunk = 64 * 1024

    /// Whether reading a peer's credentials failed because the connection is already closed. Not `isActive`: a new
    /// connection may not be active yet when its task starts.
    static func peerIsGone(_ error: any Error) -> Bool {
        if let error = error as? IOError { return [EBADF, ENOTCONN].contains(error.errnoCode) }
        if let error = error as? ChannelError { return error == .ioOnClosedChannel }
        return false
    }

    /// SO_PEERCRED of a Unix socket peer: who may change scenes. `fails` plays a kernel that refuses it, for tests.
    static func peerCredentials(of channel: any Channel, fails: Bool) async throws -> PeerCredentials {
        guard let provider = channel as? any SocketOptionProvider, !fails else {
            throw SystemError("getsockopt SO_PEERCRED", "client socket", errno: ENOTSOCK)
        }
        let credentials: LinuxPeerCredentials = try await provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: SO_PEERCRED)
        ).get()
        return PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
    }
}

/// The layout of Linux's `struct ucred`, which Glibc's module map hides behind `_GNU_SOURCE`.
struct LinuxPeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Counts open connections for `socket.max_clients`.
final class ConnectionCounter: Sendable {
    private let count = Atomic<Int>(0)

    func admit(limit: Int) -> Bool {
        while true {
            let current = count.load(ordering: .relaxed)
            guard current < limit else { return false }
            if count.compareExchange(expected: current, desired: current + 1, ordering: .relaxed).exchanged {
                return true
            }
        }
    }

    func leave() { count.subtract(1, ordering: .relaxed) }
}

extension ControlServer: CustomStringConvertible {
    public var description: String { "ControlServer" }
}
