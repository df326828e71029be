import Testing

@testable import SceneSyncCore

@Suite("LineFramer: the protocol's line framing, shared by daemon and client")
struct LineFramerTests {
    @Test("lines end at \\n; a trailing \\r is the caller's to drop")
    func lines() {
        var framer = LineFramer()
        let bytes = Array("ab\r\ncd\n".utf8)
        #expect(framer.next(in: bytes, maxLength: 10) == .line(length: 3))
        var line = Array(bytes[0..<3])
        LineFramer.dropCarriageReturn(&line)
        #expect(line == Array("ab".utf8))
        #expect(framer.next(in: bytes[4...], maxLength: 10) == .line(length: 2))
        #expect(framer.next(in: bytes[7...], maxLength: 10) == .needMoreData)
    }

    @Test("a line that arrives in pieces is found once complete, and only the new bytes are searched")
    func pieces() {
        var framer = LineFramer()
        var buffer = Array("abc".utf8)
        #expect(framer.next(in: buffer, maxLength: 10) == .needMoreData)
        buffer += Array("de\nf".utf8)
        #expect(framer.next(in: buffer, maxLength: 10) == .line(length: 5))
    }

    @Test("over the limit: a complete line, or an incomplete one already longer")
    func tooLong() {
        var framer = LineFramer()
        #expect(framer.next(in: Array("abcdef\n".utf8), maxLength: 5) == .tooLong)
        framer.reset()
        #expect(framer.next(in: Array("abcdef".utf8), maxLength: 5) == .tooLong)
        framer.reset()
        #expect(framer.next(in: Array("abcde\n".utf8), maxLength: 5) == .line(length: 5))
    }

    @Test(
        "on contiguous bytes it gives the generic search's answers, piece by piece",
        arguments: [
            ["ab\r\ncd\n"], ["abc", "de\nf"], ["abcdef\n"], ["abcdef"], ["abcde\n"], ["", "\n"],
            ["a", "b", "c", "\n\n"],
        ])
    func contiguousBytes(_ pieces: [String]) {
        var generic = LineFramer()
        var raw = LineFramer()
        var buffer: [UInt8] = []
        for piece in pieces {
            buffer += Array(piece.utf8)
            while true {
                let expected = generic.next(in: buffer, maxLength: 5)
                #expect(buffer.withUnsafeBytes { raw.next(in: $0, maxLength: 5) } == expected)
                guard case .line(let length) = expected else { break }
                buffer.removeFirst(length + 1)
            }
            if buffer.count > 5 {
                buffer.removeAll()
                generic.reset()
                raw.reset()
            }
        }
    }
}
