import NIOCore
import SceneSyncCore

/// Splits the daemon's byte stream into lines (the protocol: one JSON object per `\n`-terminated line, a trailing `\r`
/// ignored, an unterminated last line at EOF still a line).
///
/// Lines are handed on as `[UInt8]` because the JSON parser works on byte arrays. A line longer than `maxLength`
/// fails the channel: the daemon never sends one, so it can only be a peer that does not speak the protocol, and
/// buffering it would let that peer exhaust memory.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = [UInt8]

    let maxLength: Int
    /// The framing the daemon shares (SceneSyncCore).
    private var framer = LineFramer()

    init(maxLength: Int) {
        self.maxLength = maxLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        switch framer.next(in: buffer.readableBytesView, maxLength: maxLength) {
        case .needMoreData:
            return .needMoreData
        case .tooLong:
            throw LineTooLong(limit: maxLength)
        case .line(let length):
            var line = buffer.readBytes(length: length) ?? []
            buffer.moveReaderIndex(forwardBy: 1)
            LineFramer.dropCarriageReturn(&line)
            context.fireChannelRead(Self.wrapInboundOut(line))
            return .continue
        }
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            var line = buffer.readBytes(length: buffer.readableBytes) ?? []
            LineFramer.dropCarriageReturn(&line)
            context.fireChannelRead(Self.wrapInboundOut(line))
        }
        return .needMoreData
    }

    /// The peer sent a line longer than the client accepts.
    struct LineTooLong: Error, CustomStringConvertible {
        var limit: Int
        var description: String { "a line longer than \(limit) bytes" }
    }
}
