import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@testable import SceneSyncClient

/// The client's line framing under swift-nio's own decoder checks: whole, a byte at a time and all at once, in
/// shuffled orders, the daemon's lines come out the same, with nothing left over.
@Suite struct LineFrameDecoderTests {
    @Test func everyWayOfFeedingTheBytesGivesTheSameLines() throws {
        try ByteToMessageDecoderVerifier.verifyDecoder(
            stringInputOutputPairs: [
                ("{\"id\":1,\"ok\":true}\n", [Array("{\"id\":1,\"ok\":true}".utf8)]),
                ("crlf\r\n", [Array("crlf".utf8)]),
                ("\n", [[]]),
                ("two\nlines\n", [Array("two".utf8), Array("lines".utf8)]),
                (String(repeating: "x", count: 32) + "\n", [Array(String(repeating: "x", count: 32).utf8)]),
            ],
            decoderFactory: { LineFrameDecoder(maxLength: 32) })
    }

    @Test func aLineOverTheLimitFailsTheChannel() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maxLength: 8)))
        var buffer = channel.allocator.buffer(capacity: 16)
        buffer.writeString(String(repeating: "y", count: 9))
        #expect(throws: LineFrameDecoder.LineTooLong.self) { try channel.writeInbound(buffer) }
        _ = try? channel.finish()  // the channel is failed; what it holds is not the point here
    }
}
