import NIOCore

/// Splits the daemon's byte stream into lines (§6: one JSON object per `\n`-terminated line, a trailing `\r`
/// ignored, an unterminated last line at EOF still a line).
///
/// Lines are handed on as `[UInt8]` because the JSON parser works on byte arrays. A line longer than `maxLength`
/// fails the channel: the daemon never sends one, so it can only be a peer that does not speak the protocol, and
/// buffering it would let that peer exhaust memory.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = [UInt8]

    let maxLength: Int
    /// How far the buffer has already been searched for a newline, so that a long line is scanned once.
    private var scanned = 0

    init(maxLength: Int) {
        self.maxLength = maxLength
    }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let readable = buffer.readableBytesView
        let searchStart = readable.index(readable.startIndex, offsetBy: min(scanned, readable.count))
        guard let newline = readable[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = readable.count
            if readable.count > maxLength { throw LineTooLong(limit: maxLength) }
            return .needMoreData
        }
        scanned = 0
        var line = buffer.readBytes(length: newline - readable.startIndex) ?? []
        buffer.moveReaderIndex(forwardBy: 1)
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }

    mutating func decodeLast(
        context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
    ) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if buffer.readableBytes > 0 {
            var line = buffer.readBytes(length: buffer.readableBytes) ?? []
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
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
