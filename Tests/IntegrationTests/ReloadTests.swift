import Foundation
import SceneSyncCore
import Testing

/// Reloading the configuration (§6 `reload`, §7 `SIGHUP`): a valid file takes effect while running, an invalid one
/// is refused and the old configuration stays.
@Suite struct ReloadTests {
    /// A `set` whose scene file is about 200 bytes: refused under `max_file_bytes: 100`.
    static let bigSet = ["scene": J.string("s"), "path": #"[{"value":"\#(String(repeating: "x", count: 200))"}]"#]

    /// Sends SIGHUP and waits until systemd would have been told that the reload is over.
    static func hangUp(_ daemon: DaemonProcess) async throws {
        let notify = try #require(daemon.notify)
        daemon.signal(SIGHUP)
        let reloading = try #require(try await notify.waitFor("RELOADING=1"), "no RELOADING=1 after SIGHUP")
        #expect(reloading.contains("MONOTONIC_USEC="))
        try #require(try await notify.waitFor("READY=1") != nil, "no READY=1 after the reload")
    }

    @Test func reloadAppliesTheNewHistoryLimit() async throws {
        let daemon = try DaemonProcess(config: "history: {max_revisions: 2}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        let start = try await client.clock()
        for n in 1...4 { try await client.ok("set", ["scene": J.string("h"), "path": "[{\"value\":\(n)}]"]) }
        try await client.subscribe(since: (start.epoch, start.revision + 1))
        #expect(try await client.events(until: "synced").first?["reason"]?.stringValue == "compacted")

        try daemon.writeConfig("history: {max_revisions: 100}\n")
        try await client.ok("reload")
        for n in 5...8 { try await client.ok("set", ["scene": J.string("h"), "path": "[{\"value\":\(n)}]"]) }
        let resumer = try await daemon.connect()
        try await resumer.subscribe(since: (start.epoch, start.revision + 4))
        let events = try await resumer.events(until: "synced")
        #expect(events.named("resync").isEmpty, "\(events.map(\.text))")
        #expect(events.named("change").compactMap(\.revision) == Array((start.revision + 5)...(start.revision + 8)))
    }

    @Test func reloadAppliesTheNewSubscriberQueue() async throws {
        let daemon = try DaemonProcess(config: "socket: {subscriber_queue: 4096}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let writer = try await daemon.connect()
        try daemon.writeConfig("socket: {subscriber_queue: 16}\n")
        try await writer.ok("reload")
        // A connection made after the reload gets the smaller queue: a silent subscriber lags once its socket buffer
        // (a few hundred kilobytes) and 16 more events are full, long before 4096 events could be queued.
        let silent = try await daemon.connect()
        try await silent.subscribe()
        var n = 0
        while try await writer.stat("lagged") == 0 {
            n += 1
            try #require(n <= 2000, "the silent subscriber did not lag with a queue of 16")
            let value = String(repeating: "x", count: 2000 + n)
            try await writer.ok("set", ["scene": J.string("s"), "path": #"[{"value":"\#(value)"}]"#])
        }
        #expect(try await writer.stat("events_dropped") > 0)
    }

    @Test func sighupReloads() async throws {
        let daemon = try DaemonProcess(config: "log: {level: debug}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        var other = Self.bigSet
        other["scene"] = J.string("t")
        #expect(try await client.request("set", other).isOK)

        try daemon.writeConfig("scenes: {max_file_bytes: 100}\n")
        try await Self.hangUp(daemon)
        #expect(try await client.request("set", Self.bigSet).errorCode == "too_large")
        #expect(await daemon.logs("configuration reloaded"))
    }

    @Test func invalidConfigurationIsRefusedAndTheOldOneStays() async throws {
        let daemon = try DaemonProcess(config: "scenes: {max_file_bytes: 100}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        for invalid in [
            "scenes: {max_file_bytes: 100000}\nbogus: 1\n", "scenes: {max_file_bytes: 0}\n", "scenes: [\n",
            "socket: {mode: 0660}\n",
        ] {
            try daemon.writeConfig(invalid)
            let response = try await client.request("reload")
            #expect(response.errorCode == "invalid_config", "\(invalid): \(response.text)")
            #expect(response["error"]?["message"]?.stringValue?.isEmpty == false)
            #expect(try await client.request("set", Self.bigSet).errorCode == "too_large", "\(invalid) took effect")
        }

        try daemon.writeConfig("scenes: {max_file_bytes: 100000}\nbogus: 1\n")
        try await Self.hangUp(daemon)
        #expect(try await client.request("set", Self.bigSet).errorCode == "too_large")
        #expect(await daemon.logs("reload failed"))
        #expect(try await client.ok("hello").isOK)

        try daemon.writeConfig("scenes: {max_file_bytes: 100000}\n")
        try await client.ok("reload")
        #expect(try await client.request("set", Self.bigSet).isOK)
    }

    /// A reload applies every setting but the paths and `cluster.*` (§8): with a new scenes directory, socket and
    /// database in the file, the daemon keeps its socket and directory, merges no file of the new one, and stays
    /// without replication until the next start, and says so.
    @Test func reloadLeavesThePathsAndTheClusterForTheNextStart() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        daemon.pathsAsFlags = false
        let paths = (scenes: daemon.scenes.path, state: daemon.state.path, socket: daemon.socketPath)
        try daemon.writeConfig(
            "scenes: {directory: \"\(paths.scenes)\"}\nstate: {directory: \"\(paths.state)\"}\n"
                + "socket: {path: \"\(paths.socket)\"}\n")
        try await daemon.start()
        let client = try await daemon.connect()

        let other = daemon.root.appending("other-scenes")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: false)
        let otherSocket = daemon.root.appending("other.sock").path
        try daemon.writeConfig(
            "scenes: {directory: \"\(other.path)\"}\nstate: {directory: \"\(paths.state)\"}\n"
                + "socket: {path: \"\(otherSocket)\"}\n"
                + "cluster: {postgres: \"postgres://nobody@/nothing?host=/nonexistent-dir\", host: elsewhere}\n")
        try await client.ok("reload")

        try Data("[1]".utf8).write(to: other.appendingPathComponent("new.json"))
        try daemon.writeScene("old", "[2]")
        try await client.sync()
        #expect(try await client.request("get", ["scene": J.string("new")]).errorCode == "not_found")
        #expect(try await client.scene("old")["version"]?.uint64Value == 1)
        #expect(!FileManager.default.fileExists(atPath: otherSocket), "the socket moved on a reload")
        #expect(try await daemon.connect().clock().revision >= 1, "the old socket no longer answers")
        #expect(try await client.ok("stats")["cluster"] == .null, "replication started on a reload")
        #expect(await daemon.logs("changed; it takes effect at the next restart"))
        #expect(await daemon.logs("cluster settings changed; they take effect at the next restart"))
    }
}
