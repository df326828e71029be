import NIOCore

/// Passes the lines decoded from one read burst on as one batch.
///
/// A client that pipelines requests sends many lines per read. Served one at a time, every request is its own turn
/// of the owner loop, and every change it makes wakes every subscriber's writer for that one event; served as a
/// batch, the changes of the whole burst are queued before any writer runs, so each subscriber gets them in one
/// write. A batch ends at the end of the read (`channelReadComplete`), and at EOF or half-closure, whose last lines
/// the decoder delivers just before the event.
final class LineBatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = InboundLine
    typealias InboundOut = [InboundLine]

    private var pending: [InboundLine] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        pending.append(unwrapInboundIn(data))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        flush(context)
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        flush(context)
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        flush(context)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        flush(context)
        context.fireErrorCaught(error)
    }

    private func flush(_ context: ChannelHandlerContext) {
        guard !pending.isEmpty else { return }
        let batch = pending
        pending = []
        context.fireChannelRead(wrapInboundOut(batch))
    }
}
