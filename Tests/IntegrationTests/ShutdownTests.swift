import Foundation
import SceneSyncCore
import Testing

/// Graceful shutdown never waits on a client.
@Suite struct ShutdownTests {
    @Test func aClientThatNeverReadsDoesNotBlockAShutdown() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let sleeper = try await daemon.connect()
        _ = try await sleeper.send("subscribe")  // and never read again
        // Large paths fill the sleeper's socket buffer, so its writer blocks in the middle of a write.
        try await Self.setLargePaths(on: daemon)
        let status = try await daemon.stop(SIGTERM, timeout: .seconds(25))
        #expect(status == 0, "\(daemon.stderrText.suffix(2000))")
        // The final snapshot was still written, with all 40 changes.
        let newest = try #require(daemon.snapshotFiles().last)
        #expect(newest.hasSuffix("00000000000000000040.json"))
    }

    /// Only a client that stopped reading is closed early: one still reading its backlog when the shutdown begins
    /// gets every event and the `shutdown` event, even when that takes longer than the stall limit (2 s).
    @Test func aClientStillReadingItsBacklogGetsTheShutdownEvent() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let reader = try await daemon.connect()
        _ = try await reader.request("subscribe")
        // Far more than the socket buffers take, so most of these events wait in the daemon.
        try await Self.setLargePaths(on: daemon)
        daemon.signal(SIGTERM)
        let started = ContinuousClock.now
        let received = await Self.readSlowlyUntilEOF(reader.fd)
        let elapsed = ContinuousClock.now - started
        #expect(received.last == UInt8(ascii: "\n"), "the connection ended in the middle of a line")
        let events = try received.split(separator: UInt8(ascii: "\n")).map {
            try json(String(decoding: $0, as: UTF8.self))
        }
        #expect(events.filter { $0.eventName == "change" }.count == 40)
        #expect(events.last?.eventName == "shutdown")
        #expect(elapsed > .seconds(2), "the backlog was read faster than the stall limit")
        #expect(try await daemon.waitForExit() == 0)
    }

    /// Once nothing accepts any more, the socket stops listening, while connections still drain: a client that
    /// connects then is refused at once (`ECONNREFUSED`) instead of waiting in the backlog until the daemon exits,
    /// and a daemon started meanwhile finds nothing listening there.
    @Test func aClientConnectingWhileConnectionsDrainIsRefused() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let sleeper = try await daemon.connect()
        _ = try await sleeper.send("subscribe")  // and never read again: the drain waits for it (2 s)
        try await Self.setLargePaths(on: daemon)
        daemon.signal(SIGTERM)
        let path = daemon.socketPath
        let refused = await eventually(timeout: .seconds(20)) {
            let attempt = await DedicatedThread.run("connect") {
                SocketClient.openConnection(path: path, timeout: .seconds(1))
            }
            if attempt.fd >= 0 { close(attempt.fd) }
            // After the exit the socket file is gone (ENOENT): only a refusal shows the drain's own state.
            return attempt.error == ECONNREFUSED
        }
        #expect(refused, "a connection made during the drain was taken into the backlog")
        #expect(try await daemon.waitForExit() == 0)
    }

    /// Sets the scene `big` 40 times, each time to a path of about 60 KB: 2.4 MB of change events for a subscriber.
    static func setLargePaths(on daemon: DaemonProcess) async throws {
        let writer = try await daemon.connect()
        let big = J.string(String(repeating: "x", count: 60_000))
        for index in 0..<40 {
            let response = try await writer.request(
                "set", ["scene": J.string("big"), "path": #"[{"value":{"n":\#(index),"s":\#(big)}}]"#])
            #expect(response.isOK, "\(response)")
        }
    }

    /// A client that keeps reading, slowly: 60 KB every 100 ms until EOF (about 4 s for the backlog above, twice
    /// the stall limit). On a thread of its own, so that its pace is the kernel's and not that of the test process's
    /// cooperative pool, which the whole suite running beside it can hold up for seconds.
    static func readSlowlyUntilEOF(_ fd: Int32) async -> [UInt8] {
        await DedicatedThread.run("slow reader") {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 60_000)
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&ready, 1, 1000)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count == 0 { break }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    break
                }
                received.append(contentsOf: chunk[0..<count])
                usleep(100_000)
            }
            return received
        }
    }

    @Test func aConnectionDuringShutdownIsToldAndClosed() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        _ = try await client.request("hello")
        daemon.signal(SIGTERM)
        #expect(try await client.nextEvent()["event"]?.stringValue == "shutdown")
        #expect(await client.isClosedByPeer())
        #expect(try await daemon.waitForExit() == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file it bound is removed")
    }
}
