public import Logging
import NIOCore
import NIOPosix
import SceneSyncCore
public import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The Unix-socket server of §6: a listening channel on the engine loop whose connections are
/// ``ConnectionHandler``s on the same loop.
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

    let engine: Engine
    let listener: Listener
    /// Read at each use: a reload changes them for open connections too.
    let limits: ConnectionLimits
    let logger: Logger
    let onListening: @Sendable () async -> Void
    /// Lines any client can cause, each kind limited on its own.
    private let credentialWarnings = ClientLogLimiter()

    let shutdownPolicy: ShutdownClosePolicy
    let testFaults: ServerTestFaults

    public init(
        engine: Engine, listener: Listener, limits: ConnectionLimits, logger: Logger,
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
        let eventLoop = engine.loop.eventLoop
        let shared = NIOLoopBound(
            ConnectionHandler.Server(
                engine: engine, limits: limits, logger: logger, connections: ConnectionSet(eventLoop: eventLoop),
                flusher: TurnFlusher(eventLoop: eventLoop, counters: engine.counters),
                credentialWarnings: credentialWarnings, testFaults: testFaults),
            eventLoop: eventLoop)
        let listeningFD: Int32
        var bound: BoundSocket? = nil
        switch listener {
        case .path(let path, let mode):
            (listeningFD, bound) = try ControlServer.bind(path: path, mode: mode, backlog: Self.backlog)
        case .inherited(let descriptor):
            try ListeningSocket.adopt(descriptor)
            listeningFD = descriptor
        }
        defer {
            // Only a socket we bound ourselves is ours to remove; an inherited one belongs to systemd.
            bound?.remove()
        }
        // Closed as soon as nothing accepts any more, so that a client that connects while the connections drain is
        // refused at once instead of waiting in the backlog, and a daemon started meanwhile finds nothing listening.
        // An inherited socket is closed too: systemd keeps its own copy.
        var listening: Int32? = listeningFD
        defer { if let listening { close(listening) } }
        // The connections live on the engine's own loop: a request and the events it causes cross no thread.
        let acceptor = try ConnectionAcceptor.start(listeningFD: listeningFD, eventLoop: eventLoop, logger: logger) {
            descriptors in
            eventLoop.execute { ConnectionHandler.serve(descriptors, server: shared, on: eventLoop) }
        }
        logger.info("listening", metadata: ["socket": "\(bound?.path ?? "inherited fd")"])
        await onListening()
        let policy = shutdownPolicy
        try await withGracefulShutdownHandler {
            try await withTaskCancellationHandler {
                try await acceptor.finished.get()
            } onCancel: {
                acceptor.stop()
            }
            if let descriptor = listening {
                close(descriptor)
                listening = nil
            }
            // Cancelled rather than shut down: nothing is waited for. Only now that the acceptor is done, as every
            // connection it took was handed to the loop before: none is served after this.
            if Task.isCancelled { try await eventLoop.submit { shared.value.connections.closeAll() }.get() }
            // The server shuts down last, after the engine sent `shutdown` and closed every outbox: each
            // connection ends once its writer drained it, or when the policy gives up on a client that does not read.
            try await eventLoop.flatSubmit {
                shared.value.connections.beginShutdown(policy: policy)
                return shared.value.connections.closed
            }.get()
        } onGracefulShutdown: {
            acceptor.stop()
        }
    }

    /// Connections the kernel may hold before the daemon accepts them.
    static let backlog: Int32 = 512

    /// Whether reading a peer's credentials failed because the connection is already closed: the client connected
    /// and left at once.
    static func peerIsGone(_ error: any Error) -> Bool {
        if let error = error as? IOError { return [EBADF, ENOTCONN].contains(error.errnoCode) }
        if let error = error as? ChannelError { return error == .ioOnClosedChannel }
        return false
    }

    /// SO_PEERCRED of a Unix socket peer: who may change scenes. `fails` plays a kernel that refuses it, for tests.
    static func peerCredentials(of channel: any Channel, fails: Bool) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider, !fails else {
            return channel.eventLoop.makeFailedFuture(
                SystemError("getsockopt SO_PEERCRED", "client socket", errno: ENOTSOCK))
        }
        let credentials: EventLoopFuture<LinuxPeerCredentials> = provider.unsafeGetSocketOption(
            level: NIOBSDSocket.OptionLevel(rawValue: SOL_SOCKET), name: NIOBSDSocket.Option(rawValue: SO_PEERCRED))
        return credentials.map { PeerCredentials(pid: $0.pid, uid: $0.uid, gid: $0.gid) }
    }
}

/// The layout of Linux's `struct ucred`, which Glibc's module map hides behind `_GNU_SOURCE`.
struct LinuxPeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension ControlServer: CustomStringConvertible {
    public var description: String { "ControlServer" }
}
