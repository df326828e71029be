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
        let writer = try await daemon.connect()
        // Large paths fill the sleeper's socket buffer, so its writer blocks in the middle of a write.
        let big = J.string(String(repeating: "x", count: 60_000))
        for index in 0..<40 {
            let response = try await writer.request(
                "set", ["scene": J.string("big"), "path": #"[{"value":{"n":\#(index),"s":\#(big)}}]"#])
            #expect(response.isOK, "\(response)")
        }
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
        let writer = try await daemon.connect()
        // 40 events of 60 KB: far more than the socket buffers, so most of them wait in the daemon.
        let big = J.string(String(repeating: "x", count: 60_000))
        for index in 0..<40 {
            let response = try await writer.request(
                "set", ["scene": J.string("big"), "path": #"[{"value":{"n":\#(index),"s":\#(big)}}]"#])
            #expect(response.isOK, "\(response)")
        }
        daemon.signal(SIGTERM)
        let started = ContinuousClock.now
        var changes = 0
        while true {
            let event = try await reader.nextEvent()
            if event.eventName == "shutdown" { break }
            if event.eventName == "change" { changes += 1 }
            // The pace of a slow client that keeps reading: about 4 s for the backlog, twice the stall limit.
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(changes == 40)
        #expect(ContinuousClock.now - started > .seconds(2), "the backlog was read faster than the stall limit")
        #expect(await reader.isClosedByPeer())
        #expect(try await daemon.waitForExit() == 0)
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
