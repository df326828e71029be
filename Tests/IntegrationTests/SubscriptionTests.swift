import Foundation
import SceneSyncCore
import Testing

/// Subscriptions (§6): the catch-up (`state`s, or the changes since a clock, or a `resync`), then `synced`, then live
/// changes in revision order; `history`, heartbeats and `phase` events.
@Suite struct SubscriptionTests {
    /// A daemon with `files` merged and a client that is not subscribed yet.
    static func start(
        _ files: [String: String] = [:], config: String? = nil
    ) async throws -> (DaemonProcess, SocketClient) {
        let daemon = try DaemonProcess(config: config)
        for (id, content) in files { try Data(content.utf8).write(to: daemon.sceneFile(id)) }
        try await daemon.start()
        return (daemon, try await daemon.connect())
    }

    @Test func subscribeSendsStatesOfMatchingScenesThenSynced() async throws {
        let (daemon, client) = try await Self.start(["a1": "[1]", "a2": #"["App.Page","2"]"#, "b1": "[3]"])
        defer { daemon.cleanup() }
        let clock = try await client.clock()
        let response = try await client.ok("subscribe", ["scenes": #"["a*"]"#])
        let id = try #require(response["subscription"]?.uint64Value)
        #expect(response["epoch"]?.stringValue == clock.epoch)
        #expect(response.revision == clock.revision)

        let catchUp = try await client.events(until: "synced")
        #expect(catchUp.map(\.eventName) == ["state", "state", "synced"])
        #expect(Set(catchUp.named("state").compactMap { $0["scene"]?.stringValue }) == ["a1", "a2"])
        #expect(catchUp.allSatisfy { $0["subscription"]?.uint64Value == id })
        let a2 = try #require(catchUp.first { $0["scene"]?.stringValue == "a2" })
        let wire = try await client.scene("a2")
        for key in ["scene", "version", "created", "modified", "format", "path"] {
            #expect(a2[key] == wire[key], "state event \(key)")
        }
        #expect(catchUp.last?["epoch"]?.stringValue == clock.epoch)
        #expect(catchUp.last?.revision == clock.revision)

        // Live: a change to a matching scene arrives, one to another scene does not.
        try daemon.writeScene("b1", "[4]")
        try daemon.writeScene("a1", "[5]")
        try daemon.writeScene("a3", "[6]")
        try await client.sync()
        let live = client.takeEvents()
        #expect(live.map(\.eventName) == ["change", "change"])
        #expect(live.compactMap { $0["scene"]?.stringValue } == ["a1", "a3"])
        #expect(live.allSatisfy { $0["subscription"]?.uint64Value == id && $0["id"] == nil })
        #expect(live.first?["path"] == (try json(#"[{"value":5}]"#)))
        #expect(live.compactMap(\.revision) == [clock.revision + 2, clock.revision + 3])
    }

    @Test func withoutInitialStateOnlySynced() async throws {
        let (daemon, client) = try await Self.start(["a": "[1]", "b": "[2]"])
        defer { daemon.cleanup() }
        try await client.subscribe(initial: false)
        #expect(try await client.events(until: "synced").map(\.eventName) == ["synced"])
    }

    /// Two subscriptions on one connection each get their own copy, tagged with their own id.
    @Test func subscriptionsOnOneConnectionAreIndependent() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let all = try await client.subscribe(initial: false)
        _ = try await client.events(until: "synced")
        let some = try await client.subscribe(["x"], initial: false)
        _ = try await client.events(until: "synced")
        #expect(all != some)
        try await client.ok("set", ["scene": J.string("x"), "path": "[]"])
        try await client.ok("set", ["scene": J.string("y"), "path": "[]"])
        let changes = client.takeEvents().named("change")
        let x = changes.filter { $0["scene"]?.stringValue == "x" }.compactMap { $0["subscription"]?.uint64Value }
        let y = changes.filter { $0["scene"]?.stringValue == "y" }.compactMap { $0["subscription"]?.uint64Value }
        #expect(x.sorted() == [all, some].sorted())
        #expect(y == [all])
    }

    @Test func sinceResumesWithTheLaterChangesInOrder() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        for n in 1...3 { try daemon.writeScene("a", "[\(n)]") }
        try daemon.writeScene("b", "[0]")
        try await client.sync()
        let mark = try await client.clock()
        for n in 4...6 {
            try daemon.writeScene("a", "[\(n)]")
            try await client.sync()
        }
        try daemon.writeScene("b", "[1]")
        try await client.sync()

        let resumer = try await daemon.connect()
        try await resumer.subscribe(["a"], since: mark)
        let events = try await resumer.events(until: "synced")
        #expect(events.map(\.eventName) == ["change", "change", "change", "synced"])
        #expect(
            events.compactMap(\.revision) == [
                mark.revision + 1, mark.revision + 2, mark.revision + 3, mark.revision + 4,
            ])
        #expect(events.named("change").map { $0["path"] } == [4, 5, 6].map { n in try? json("[{\"value\":\(n)}]") })

        // Resuming at the current revision has nothing to catch up.
        let current = try await client.clock()
        let uptodate = try await daemon.connect()
        try await uptodate.subscribe(since: current)
        #expect(try await uptodate.events(until: "synced").map(\.eventName) == ["synced"])
    }

    @Test func sinceFromAnotherEpochResyncs() async throws {
        let (daemon, client) = try await Self.start(["a": "[1]", "b": "[2]"])
        defer { daemon.cleanup() }
        try await client.subscribe(["a"], since: ("not-this-epoch", 1))
        let events = try await client.events(until: "synced")
        #expect(events.map(\.eventName) == ["resync", "state", "synced"])
        #expect(events.first?["reason"]?.stringValue == "epoch")
        #expect(events[1]["scene"]?.stringValue == "a")
    }

    @Test func sinceOlderThanHistoryResyncsCompacted() async throws {
        let (daemon, client) = try await Self.start(config: "history: {max_revisions: 5}\n")
        defer { daemon.cleanup() }
        let start = try await client.clock()
        for n in 1...10 {
            try await client.ok("set", ["scene": J.string("s"), "path": "[{\"value\":\(n)}]"])
        }
        try await client.subscribe(since: (start.epoch, start.revision + 2))
        let events = try await client.events(until: "synced")
        #expect(events.map(\.eventName) == ["resync", "state", "synced"])
        #expect(events.first?["reason"]?.stringValue == "compacted")
        #expect(events[1]["version"]?.uint64Value == 10)

        // The last five are still there.
        let recent = try await daemon.connect()
        try await recent.subscribe(since: (start.epoch, start.revision + 5))
        let changes = try await recent.events(until: "synced")
        #expect(changes.named("change").compactMap(\.revision) == Array((start.revision + 6)...(start.revision + 10)))
        #expect(changes.named("resync").isEmpty)
    }

    @Test func unsubscribeStopsTheEvents() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let id = try await client.subscribe()
        _ = try await client.events(until: "synced")
        try daemon.writeScene("a", "[1]")
        try await client.sync()
        #expect(client.takeEvents().named("change").count == 1)

        let response = try await client.ok("unsubscribe", ["subscription": "\(id)"])
        #expect(response["error"] == nil)
        try daemon.writeScene("a", "[2]")
        try await client.sync()
        #expect(client.takeEvents().isEmpty)
        #expect(try await client.request("unsubscribe", ["subscription": "\(id)"]).isOK == false)
        #expect(try await client.stat("subscribers") == 0)
    }

    /// Another connection's subscription is not this connection's to cancel.
    @Test func unsubscribeOnlyOwnSubscriptions() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let id = try await client.subscribe()
        _ = try await client.events(until: "synced")
        let other = try await daemon.connect()
        #expect(try await other.request("unsubscribe", ["subscription": "\(id)"]).isOK == false)
        try daemon.writeScene("a", "[1]")
        try await client.sync()
        #expect(client.takeEvents().named("change").count == 1)
    }

    @Test func historyIsNewestFirstWithLimit() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        for n in 1...4 {
            try await client.ok("set", ["scene": J.string("h"), "path": "[{\"value\":\(n)}]"])
            try await client.ok("set", ["scene": J.string("other"), "path": "[{\"value\":\(n)}]"])
        }
        let all = try #require(try await client.ok("history", ["scene": J.string("h")])["records"]?.arrayValue)
        #expect(all.compactMap { $0["version"]?.uint64Value } == [4, 3, 2, 1])
        #expect(all.allSatisfy { $0["scene"]?.stringValue == "h" && $0["subscription"] == nil })
        #expect(all.first?["path"] == (try json(#"[{"value":4}]"#)))
        #expect(all.first?["kind"]?.stringValue == "set")
        #expect(all.first?["origin"]?["source"]?.stringValue == "client")
        let limited = try #require(
            try await client.ok("history", ["scene": J.string("h"), "limit": "2"])["records"]?.arrayValue)
        #expect(limited.compactMap { $0["version"]?.uint64Value } == [4, 3])
        #expect(try await client.ok("history", ["scene": J.string("none")])["records"] == .array([]))
    }

    @Test func heartbeatsArrive() async throws {
        let (daemon, client) = try await Self.start(config: "socket: {heartbeat_s: 1}\n")
        defer { daemon.cleanup() }
        let id = try await client.subscribe()
        _ = try await client.events(until: "synced")
        client.timeout = .seconds(10)
        client.skipsHeartbeats = false
        let heartbeat = try #require(try await client.events(until: "heartbeat").last)
        #expect(heartbeat["subscription"]?.uint64Value == id)
        #expect(heartbeat["epoch"]?.stringValue == (try await client.clock().epoch))
        #expect(heartbeat.revision != nil)
    }

    @Test func phaseEventsGoToMatchingSubscriptions() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let matching = try await daemon.connect()
        let id = try await matching.subscribe(["w*"])
        _ = try await matching.events(until: "synced")
        let other = try await daemon.connect()
        try await other.subscribe(["x*"])
        _ = try await other.events(until: "synced")

        try await client.ok("phase", ["scene": J.string("w1"), "phase": J.string("inactive")])
        try await matching.sync()
        try await other.sync()
        let events = matching.takeEvents()
        #expect(events.map(\.eventName) == ["phase"])
        #expect(events.first?["scene"]?.stringValue == "w1")
        #expect(events.first?["phase"]?.stringValue == "inactive")
        #expect(events.first?["subscription"]?.uint64Value == id)
        #expect(other.takeEvents().isEmpty)
    }

    /// A thousand rapid atomic writes to one scene: every accepted one is a change, in order, without gaps, possibly
    /// fewer than the writes, and the last write wins.
    @Test func rapidWritesArriveInOrderAndTheLastWins() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.subscribe()
        _ = try await client.events(until: "synced")
        let start = try await client.sync()
        for n in 0..<1000 { try daemon.writeScene("fast", "[\(n)]") }
        let end = try await client.sync()

        let changes = client.takeEvents().named("change")
        #expect(!changes.isEmpty && changes.count <= 1000, "\(changes.count) changes")
        #expect(changes.compactMap(\.revision) == Array((start + 1)...end))
        #expect(changes.compactMap { $0["version"]?.uint64Value } == Array(1...UInt64(changes.count)))
        let values = changes.compactMap { $0["path"]?.arrayValue?.first?["value"]?.uint64Value }
        #expect(values == values.sorted() && Set(values).count == values.count, "writes seen out of order")
        #expect(values.last == 999)
        #expect(try await client.scene("fast")["path"] == (try json(#"[{"value":999}]"#)))
    }
}
