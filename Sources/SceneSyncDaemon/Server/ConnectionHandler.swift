import Logging
import NIOCore
import SceneSyncCore

/// One client connection of §6 as a NIO channel handler on the engine loop: no task pair, no stream bridge, no lock.
///
/// Its reader hands each batch of request lines (``LineBatcher``) to the engine in order, one batch at a time, and
/// reads no more from the socket while a batch is served or while pending output is at `socket.max_pending_bytes`.
/// Its writer takes what the engine queued in the connection's ``Outbox`` once per loop turn, writes it as one
/// buffer (in chunks of ``writeChunk``), and has the engine produce what the markers stand for (a resync after a
/// lag, the `state` events of a catch-up) as the socket takes the bytes. Both halves run on the engine's own thread,
/// so a request read here reaches the engine, and its answer and events reach the socket, without waking any other
/// thread.
final class ConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = [InboundLine]
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// What every connection of one server shares.
    struct Server {
        let engine: Engine
        let limits: ConnectionLimits
        let logger: Logger
        let connections: ConnectionSet
        let flusher: TurnFlusher
        let credentialWarnings: ClientLogLimiter
        let testFaults: ServerTestFaults
    }

    let server: Server
    var context: ChannelHandlerContext? = nil
    /// Set once the engine registered the connection.
    var connection: (id: UInt64, outbox: Outbox)? = nil

    // The reader.
    /// When the socket may be read and what goes to the engine next (§6).
    var gate = ReadGate<InboundRequest>()

    // The writer.
    /// The items taken from the outbox and not yet written, and whether such a batch is held (reported written to
    /// the outbox only once all of its bytes were taken by the socket).
    var batch = CircularBuffer<ConnectionOutput.Item>()
    var holdsBatch = false
    var batchEvents = 0
    /// The subscription whose catch-up is being written, a chunk at a time.
    var catchingUp: UInt64? = nil
    var buffer = ByteBuffer()
    var writeScheduled = false
    var writeInFlight = false
    var draining = false
    /// The connection's socket, which NIO owns and closes: written directly (``ConnectionHandler/send(_:endsBatch:)``)
    /// only while ``isOpen``.
    let socketFD: Int32
    /// Between `channelActive` and `channelInactive`, and until a write failed: while it is true, NIO has not
    /// closed ``socketFD``. NIO closes a channel's socket and makes it inactive before it calls any handler or
    /// callback, and the first it calls are a failed write's callback and then `channelInactive`, which both clear
    /// this. Kept here rather than asked of the channel for each write, which retains and releases its pipeline.
    var isOpen = false

    init(server: Server, socketFD: Int32) {
        self.server = server
        self.socketFD = socketFD
    }

    /// Largest write the writer assembles before handing it on and waiting for the socket to take it. A backlog of
    /// a thousand events is a third of a megabyte; buffers that size come from fresh zeroed pages (above malloc's
    /// mmap threshold) on every batch, while 64 KiB ones are reused.
    static let writeChunk = 64 * 1024

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        buffer = context.channel.allocator.buffer(capacity: 0)
    }

    func channelActive(context: ChannelHandlerContext) {
        isOpen = true
        context.fireChannelActive()
        let maxClients = server.limits.maxClients
        guard server.connections.admit(self, limit: maxClients) else {
            turnAway(context, maxClients: maxClients)
            return
        }
        readCredentials(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        isOpen = false
        connection?.outbox.close()
        connection?.outbox.detach()
        gate.stop()
        server.connections.remove(self)
        if let id = connection?.id {
            // Not from inside this call: the engine may be the one closing the channel (a stalled client), and its
            // registry is not changed under it.
            let engine = server.engine
            context.eventLoop.assumeIsolated().execute { engine.unregister(connection: id) }
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        server.logger.debug(
            "connection ended", metadata: ["connection": "\(connection?.id ?? 0)", "reason": "\(error)"])
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed = event as? ChannelEvent {
            gate.closeInput()
            serveNext()
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// NIO's read request: passed on only while the reader may take more (see ``ReadGate``).
    func read(context: ChannelHandlerContext) {
        if gate.read(outputHasRoom: outputHasRoom) {
            context.read()
        } else {
            serveNext()
        }
    }

    /// Whether the output is below its bound; false before the engine registered the connection.
    var outputHasRoom: Bool { connection?.outbox.hasRoom ?? false }

    /// Makes the read NIO asked for while the reader was busy.
    func readIfWithheld() {
        guard let context, gate.takeWithheldRead(outputHasRoom: outputHasRoom) else { return }
        context.read()
    }

    /// Over `socket.max_clients`: one error line, then close (§6).
    private func turnAway(_ context: ChannelHandlerContext, maxClients: Int) {
        gate.stop()
        let line = ResponseWriter.error(
            id: ResponseWriter.nullID,
            SceneSyncError(.unavailable, "too many clients (socket.max_clients is \(maxClients))"))
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(bytes: line))).assumeIsolated()
            .whenComplete { _ in context.close(promise: nil) }
    }

    /// SO_PEERCRED, then the engine registers the connection. A peer nobody can name may read, never change.
    private func readCredentials(_ context: ChannelHandlerContext) {
        ControlServer.peerCredentials(of: context.channel, fails: server.testFaults.failPeerCredentials)
            .assumeIsolated().whenComplete { result in
                switch result {
                case .success(let credentials):
                    self.register(context, credentials: credentials)
                case .failure(let error):
                    self.warnOfCredentials(error)
                    self.register(context, credentials: nil)
                }
            }
    }

    private func warnOfCredentials(_ error: any Error) {
        if ControlServer.peerIsGone(error) {
            // A client that connected and left at once: its socket was closed before its credentials could be
            // read. Nothing is wrong, and anyone who can open the socket can do it in a loop, so it is not a
            // warning. The connection is served as any other; it ends at once.
            server.logger.debug("a client left before its credentials were read", metadata: ["error": "\(error)"])
        } else {
            server.credentialWarnings.log(
                server.logger, level: .warning, "cannot read a client's credentials (SO_PEERCRED); it may only read",
                metadata: ["error": "\(error)"])
        }
    }

    private func register(_ context: ChannelHandlerContext, credentials: PeerCredentials?) {
        guard context.channel.isActive else { return }
        let channel = context.channel
        let outbox = server.engine.newOutbox()
        // Held strongly until the channel is inactive (``channelInactive(context:)`` detaches them): a weak
        // reference would give the handler a side table, and every retain and release of it, several per delivery,
        // would take the runtime's slow path.
        outbox.attach(wakeWriter: { self.scheduleWrite() }, releaseReader: { self.serveNext() })
        let id = server.engine.register(outbox: outbox, credentials: credentials) { channel.close(promise: nil) }
        connection = (id, outbox)
        // The writer starts by finding the outbox empty (or holding the `shutdown` of a connection that came too
        // late), and from then on waits for the outbox to wake it.
        drain()
        serveNext()
        readIfWithheld()
    }
}
