import NIOCore

/// One inbound protocol line, or the news that a line exceeded `socket.max_line_bytes`.
enum InboundLine: Sendable {
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
    /// How far the current buffer has already been searched for a newline, so long lines are scanned once.
    private var scanned = 0

    init(limits: ConnectionLimits) {
        self.limits = limits
    }

    init(maxLength: Int) {
        self.init(limits: ConnectionLimits(maxLineBytes: maxLength))
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let maxLength = limits.maxLineBytes
        guard !overflowed else {
            buffer.moveReaderIndex(to: buffer.writerIndex)
            return .needMoreData
        }
        let readable = buffer.readableBytesView
        let searchStart = readable.index(readable.startIndex, offsetBy: min(scanned, readable.count))
        guard let newline = readable[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = readable.count
            if readable.count > maxLength {
                overflowed = true
                buffer.moveReaderIndex(to: buffer.writerIndex)
                context.fireChannelRead(Self.wrapInboundOut(.tooLong))
            }
            return .needMoreData
        }
        let length = newline - readable.startIndex
        scanned = 0
        guard length <= maxLength else {
            overflowed = true
            buffer.moveReaderIndex(to: buffer.writerIndex)
            context.fireChannelRead(Self.wrapInboundOut(.tooLong))
            return .needMoreData
        }
        var line = buffer.readBytes(length: length) ?? []
        buffer.moveReaderIndex(forwardBy: 1)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        context.fireChannelRead(Self.wrapInboundOut(.line(line)))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if !overflowed, buffer.readableBytes > 0 {
            var line = buffer.readBytes(length: buffer.readableBytes) ?? []
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            context.fireChannelRead(Self.wrapInboundOut(.line(line)))
        }
        return .needMoreData
    }
}
