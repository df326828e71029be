import NIOCore
import SceneSyncCore

/// One inbound protocol line, or the news that a line exceeded `socket.max_line_bytes`.
enum InboundLine: Sendable, Equatable {
    case line([UInt8])
    case tooLong
}

/// Splits the byte stream into `\n`-terminated lines (§6): a trailing `\r` is dropped, and at EOF an unterminated
/// last line still counts. A line longer than the limit is reported once, without buffering the rest of it.
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = InboundLine

    /// `socket.max_line_bytes`, read for every line: a reload applies to open connections (§8).
    let limits: ConnectionLimits
    private var overflowed = false
    /// The framing the client shares (SceneSyncCore).
    private var framer = LineFramer()

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    init(maxLength: Int) {
        self.init(limits: ConnectionLimits(maxLineBytes: maxLength))
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard !overflowed else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let maxLength = limits.maxLineBytes
        switch buffer.withUnsafeReadableBytes({ framer.next(in: $0, maxLength: maxLength) }) {
        case .needMoreData:
            return .needMoreData
        case .tooLong:
            overflowed = true
            framer.reset()
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(Self.wrapInboundOut(.tooLong))
            return .needMoreData
        case .line(let length):
            var line = buffer.readBytes(length: length) ?? []
            buffer.moveReaderIndex(forwardBy: 1)
            LineFramer.dropCarriageReturn(&line)
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
            return .continue
        }
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !overflowed, buffer.readableBytes > 0 {
            var line = buffer.readBytes(length: buffer.readableBytes) ?? []
            LineFramer.dropCarriageReturn(&line)
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
