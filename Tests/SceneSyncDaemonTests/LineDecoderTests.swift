import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@testable import SceneSyncDaemon

/// The daemon's line framing (§6) under swift-nio's own decoder checks: every input fed whole, a byte at a time
/// (each byte in a buffer whose reader index does not start at zero), and all of them at once, in shuffled orders,
/// gives the same lines, and nothing is left in the decoder at the end.
@Suite struct LineDecoderTests {
    static func line(_ text: String) -> InboundLine { .line(Array(text.utf8)) }

    @Test func everyWayOfFeedingTheBytesGivesTheSameLines() throws {
        try ByteToMessageDecoderVerifier.verifyDecoder(
            stringInputOutputPairs: [
                ("{\"op\":\"list\"}\n", [Self.line("{\"op\":\"list\"}")]),
                ("crlf\r\n", [Self.line("crlf")]),
                ("\n", [Self.line("")]),
                ("two\nlines\n", [Self.line("two"), Self.line("lines")]),
                // Exactly the limit: still a line.
                (String(repeating: "x", count: 64) + "\n", [Self.line(String(repeating: "x", count: 64))]),
                // Only the last `\r` is dropped.
                ("a\rb\r\r\n", [Self.line("a\rb\r")]),
            ],
            decoderFactory: { LineDecoder(maxLength: 64) })
    }

    @Test func aLineOverTheLimitIsReportedOnceAndNothingAfterItIsBuffered() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineDecoder(maxLength: 8)))
        var buffer = channel.allocator.buffer(capacity: 64)
        buffer.writeString("short\n" + String(repeating: "y", count: 9))
        try channel.writeInbound(buffer)
        #expect(try channel.readInbound(as: InboundLine.self) == Self.line("short"))
        #expect(try channel.readInbound(as: InboundLine.self) == .tooLong)
        buffer.clear()
        buffer.writeString(String(repeating: "z", count: 1000) + "\nafter\n")
        try channel.writeInbound(buffer)
        #expect(try channel.readInbound(as: InboundLine.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test func anUnterminatedLastLineCountsOnceTheClientClosesItsSide() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineDecoder(maxLength: 64)))
        var buffer = channel.allocator.buffer(capacity: 16)
        buffer.writeString("last\r")
        try channel.writeInbound(buffer)
        #expect(try channel.readInbound(as: InboundLine.self) == nil)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try channel.readInbound(as: InboundLine.self) == Self.line("last"))
        #expect(try channel.finish().isClean)
    }
}
