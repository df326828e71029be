import Testing

@testable import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// Log lines go to stderr from a thread of their own: a caller never waits for the reader, a reader that falls
/// behind costs lines (counted and reported), never the caller's time, and nothing queued is lost at exit.
@Suite struct StderrWriterTests {
    /// A pipe whose read end never blocks, so that the test drains it without holding a thread.
    private static func pipeEnds() throws -> (read: Int32, write: Int32) {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        // The write end blocks, as stderr does when its reader is slow.
        try #require(fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK) == 0)
        return (ends[0], ends[1])
    }

    /// Whatever the pipe holds now.
    private static func drain(_ fd: Int32) -> [UInt8] {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { return collected }
            collected += buffer.prefix(count)
        }
    }

    /// Waits, without holding a thread of the pool, until the writer reports every line written, for at most
    /// `timeout`; `drain` runs between checks (a reader taking what arrived).
    private static func waitUntilIdle(
        _ writer: StderrWriter, timeout: Duration = .seconds(30), drain: () -> Void = {}
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while !writer.isIdle, ContinuousClock.now < deadline {
            drain()
            try await Task.sleep(for: .milliseconds(1))  // a pause between checks of the condition
        }
        drain()
    }

    @Test func linesArriveWholeAndInOrderOnceTheWriterIsIdle() async throws {
        let (readEnd, writeEnd) = try Self.pipeEnds()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let writer = StderrWriter(fd: writeEnd, bound: 1 << 20)
        for index in 0..<200 { writer.write("line \(index)\n") }
        try await Self.waitUntilIdle(writer)
        #expect(writer.isIdle)
        let lines = String(decoding: Self.drain(readEnd), as: UTF8.self).split(separator: "\n")
        #expect(lines == (0..<200).map { "line \($0)"[...] })
    }

    @Test func aLineLongerThanTheBoundStillGoesOutWhenNothingElseIsQueued() async throws {
        let (readEnd, writeEnd) = try Self.pipeEnds()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let writer = StderrWriter(fd: writeEnd, bound: 8)
        writer.write("a line of more than eight bytes\n")
        try await Self.waitUntilIdle(writer)
        #expect(String(decoding: Self.drain(readEnd), as: UTF8.self) == "a line of more than eight bytes\n")
    }

    @Test func aReaderThatTakesNothingCostsLinesNeverTheCaller() async throws {
        let (readEnd, writeEnd) = try Self.pipeEnds()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let writer = StderrWriter(fd: writeEnd, bound: 16 * 1024)
        let line = String(repeating: "x", count: 1023) + "\n"
        // Far more than the pipe (64 KiB) and the queue (16 KiB) hold together: the writer's thread is stuck in
        // write(2) while these calls go on.
        // That these calls return at all is the point; the drops are counted below (not here: the writer's thread
        // may have just taken them, with the lines it is stuck writing).
        for _ in 0..<1000 { writer.write(line) }

        // The reader takes lines again: everything queued arrives, then the count of what was dropped.
        var received: [UInt8] = []
        try await Self.waitUntilIdle(writer) { received += Self.drain(readEnd) }
        #expect(writer.isIdle)
        let lines = String(decoding: received, as: UTF8.self).split(separator: "\n")
        let kept = lines.filter { $0 == line.dropLast() }
        #expect(kept.count > 0 && kept.count < 1000)
        // One notice per batch the writer took with drops counted: more than one when the writer's thread took
        // lines between two runs of drops.
        let (prefix, suffix) = ("scenesyncd: ", " log lines were dropped: stderr did not keep up")
        let notices = lines.filter { $0.hasPrefix(prefix) && $0.hasSuffix(suffix) }
        let reported = notices.compactMap { Int($0.dropFirst(prefix.count).dropLast(suffix.count)) }.reduce(0, +)
        #expect(!notices.isEmpty && lines.count == kept.count + notices.count)
        #expect(kept.count + reported == 1000, "every line is written or counted as dropped, once")
    }
}
