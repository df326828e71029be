import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

extension ConnectionHandler {
    /// Serves connections the acceptor took, each as a channel on the engine loop whose handler keeps its
    /// descriptor for its writes. Called on the loop.
    static func serve(_ descriptors: [Int32], server shared: NIOLoopBound<Server>, on eventLoop: any EventLoop) {
        let limits = shared.value.limits
        let logger = shared.value.logger
        for descriptor in descriptors {
            ClientBootstrap(group: eventLoop)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let handlers = channel.pipeline.syncOperations
                        try handlers.addHandler(ByteToMessageHandler(LineDecoder(limits: limits)))
                        try handlers.addHandler(LineBatcher())
                        try handlers.addHandler(ConnectionHandler(server: shared.value, socketFD: descriptor))
                    }
                }
                .withConnectedSocket(descriptor)
                .whenFailure { error in
                    // NIO closed the descriptor with the channel it could not set up. (Only a socket NIO cannot make
                    // non-blocking stays open, which a socket just accepted cannot be.)
                    logger.debug("a client's connection could not be set up", metadata: ["error": "\(error)"])
                }
        }
    }
}
