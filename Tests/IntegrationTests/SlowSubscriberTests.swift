import Foundation
import SceneSyncCore
import Testing

/// A subscriber that does not read never slows the daemon or other clients (§6): its queue is cut at
/// `socket.subscriber_queue`, it later gets a gap-free prefix and a `lagged` resync, and if it stays silent past
/// `socket.stall_timeout_s` it is disconnected.
@Suite struct SlowSubscriberTests {
    /// A `set` of scene `s` whose value grows with `n`, so that a client that does not read fills its socket buffer
    /// quickly.
    static func bigSet(_ n: Int) -> [String: String] {
        ["scene": J.string("s"), "path": #"[{"value":"\#(String(repeating: "x", count: 1000 + n))"}]"#]
    }

    @Test func slowSubscriberDelaysNobody() async throws {
        // The stall timeout is not what this test is about: on a loaded machine the 1,000 changes can take longer
        // than the default 60 s, and the silent subscriber would then be closed as stalled before it reads.
        let daemon = try DaemonProcess(config: "socket: {subscriber_queue: 16, stall_timeout_s: 3600}\n")
        defer { daemon.cleanup() }
        try await daemon.start()

        let slow = try await daemon.connect()
        let slowID = try await slow.subscribe()
        // From here on `slow` reads nothing until the writes are done.
        let reader = try await daemon.connect()
        try await reader.subscribe()
        _ = try await reader.events(until: "synced")
        let writer = try await daemon.connect()

        // About 1.5 MB of change events: several times what the silent subscriber's socket buffers hold (a Unix
        // socket's send buffer is about 200 KB), so its queue fills past `subscriber_queue` and it lags.
        let count = 1000
        var revisions: [UInt64] = []
        for n in 1...count {
            let revision = try #require(try await writer.ok("set", Self.bigSet(n)).revision)
            // The change was queued for `reader` before `writer` got its answer: reading one event keeps pace.
            let event = try await reader.nextEvent()
            #expect(event.eventName == "change" && event.revision == revision, "change \(n): \(event.text.prefix(200))")
            revisions.append(revision)
        }
        #expect(zip(revisions, revisions.dropFirst()).allSatisfy { $1 == $0 + 1 }, "reader saw a gap")
        let last = try #require(revisions.last)
        #expect(try await writer.stat("lagged") == 1)
        #expect(try await writer.stat("events_dropped") > 0)

        // Now the slow one reads: what reached its socket is a gap-free prefix, then the resync.
        slow.timeout = .seconds(30)
        var prefix: [UInt64] = []
        var event = try await slow.nextEvent()
        #expect(event.eventName == "synced")
        while true {
            event = try await slow.nextEvent()
            guard event.eventName == "change" else { break }
            prefix.append(try #require(event.revision))
        }
        #expect(event.eventName == "resync", "\(event.text.prefix(200))")
        #expect(event["reason"]?.stringValue == "lagged")
        #expect(event["subscription"]?.uint64Value == slowID)
        #expect(prefix.first == revisions.first)
        #expect(prefix == Array(revisions.prefix(prefix.count)), "the prefix has a gap")
        #expect(prefix.count < count)
        let rest = try await slow.events(until: "synced")
        #expect(rest.map(\.eventName) == ["state", "synced"])
        #expect(rest.first?["version"]?.uint64Value == UInt64(count))
        #expect(rest.last?.revision == last)

        // Back in step: live changes flow again, and the lag is over.
        let next = try #require(try await writer.ok("set", ["scene": J.string("s"), "path": "[]"]).revision)
        #expect(try await slow.nextEvent().revision == next)
        #expect(try await writer.stat("lagged") == 0)
    }

    /// A subscriber still lagging when the daemon shuts down reads its `shutdown` event last: reaching its lag
    /// marker while the daemon drains brings no `resync` after it. The final snapshot is held (a test hook), so that
    /// the marker is reached while the engine still runs, and the `shutdown` event is queued behind it by then.
    @Test func aSubscriberLaggingAtShutdownReadsNothingAfterTheShutdownEvent() async throws {
        let daemon = try DaemonProcess(config: "socket: {subscriber_queue: 16, stall_timeout_s: 3600}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let slow = try await daemon.connect()
        _ = try await slow.subscribe()
        let writer = try await daemon.connect()
        var n = 0
        while try await writer.stat("lagged") == 0 {
            for _ in 0..<50 {
                n += 1
                _ = try await writer.ok("set", Self.bigSet(n))
            }
        }
        let triggers = try await writer.testCounter("snapshot_triggers")
        let hold = daemon.state.appendingPathComponent(".scenesync-test-hold-snapshot")
        try Data().write(to: hold)
        daemon.signal(SIGTERM)
        // The final snapshot is triggered right after the `shutdown` events are queued.
        try await writer.waitForTestCounter("snapshot_triggers", above: triggers)

        slow.timeout = .seconds(30)
        let events = try await slow.events(until: "shutdown")
        #expect(events.contains { $0.eventName == "resync" } == false, "the lag was resynced while draining")
        // Let the daemon finish; whatever the writer reaching the marker brought is read before the close.
        try FileManager.default.removeItem(at: hold)
        var after: [String] = []
        do {
            while true { after.append(try await slow.readLine("a line after shutdown")) }
        } catch SocketClient.ClientError.closed {}
        #expect(after.isEmpty, "after shutdown: \(after.map { $0.prefix(120) })")
        #expect(try await daemon.waitForExit() == 0)
    }

    @Test func stalledLaggingClientIsDisconnected() async throws {
        // A stall timeout no loaded machine can reach while the subscription is made to lag; a reload then
        // shortens it (the reload trick), so the close comes from the stall and never before the lag.
        let daemon = try DaemonProcess(config: "socket: {subscriber_queue: 16, stall_timeout_s: 3600}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let stalled = try await daemon.connect()
        try await stalled.subscribe()
        let writer = try await daemon.connect()
        // A burst is 3.8 MB: on a loaded machine the daemon can take longer than the default 15 s to read it all.
        writer.timeout = .seconds(120)
        #expect(try await writer.stat("clients") == 2)

        // 64 changes of 60 KB at a time, in one write: one group commit queues them all in one step, so the
        // socket fills and the subscription lags (past 16 queued events) within a few bursts. Dropped events, a
        // counter, say it lagged: the `lagged` gauge falls back to 0 once the connection is closed.
        let big = String(repeating: "x", count: 60_000)
        var sent = 0
        while try await writer.stat("events_dropped") == 0 {
            try #require(sent < 640, "the silent subscriber never lagged")
            let lines = (sent..<sent + 64).map { n in
                let path = #"[{"value":{"n":\#(n),"s":"\#(big)"}}]"#
                return SocketClient.line(id: 10_000 + n, "set", ["scene": J.string("s"), "path": path])
            }
            try await writer.send(raw: lines.joined(separator: "\n") + "\n")
            for line in lines { #expect(try await writer.readMessage().isOK, "\(line.prefix(80))") }
            sent += lines.count
        }
        #expect(try await writer.testCounter("stall_closes") == 0, "closed as stalled before the reload")
        try "socket: {subscriber_queue: 16, stall_timeout_s: 0.5}\n".write(
            to: daemon.configFile, atomically: true, encoding: .utf8)
        _ = try await writer.ok("reload")
        try await writer.waitForTestCounter("stall_closes", above: 0)
        #expect(
            try await eventually { try await writer.stat("clients") == 1 }, "the stalled client was not disconnected")
        #expect(await stalled.isClosedByPeer())
        #expect(try await writer.stat("subscribers") == 0)
        #expect(await daemon.logs("disconnecting a client whose output has not moved"))
    }
}
