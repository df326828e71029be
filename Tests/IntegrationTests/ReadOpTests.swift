import Foundation
import SceneSyncCore
import Testing

/// The answers of the read-only ops (§6 table): `hello`, `list`, `get` and `stats` carry the fields the contract
/// names, with values that agree with what the test did.
@Suite struct ReadOpTests {
    @Test func helloListAndGet() async throws {
        let daemon = try DaemonProcess()
        try Data(SceneFileTests.codableFile.utf8).write(to: daemon.sceneFile("c"))
        try Data("[1,2,3]".utf8).write(to: daemon.sceneFile("a"))
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()

        let hello = try await client.ok("hello", ["client": J.string("reader")])
        #expect(hello["server"]?.stringValue == "scenesyncd")
        #expect(hello["protocol"]?.uint64Value == 1)
        #expect(hello["pid"]?.int64Value == Int64(daemon.pid))
        #expect(hello["version"]?.stringValue?.isEmpty == false)
        // Where apps find the scene files (§6), absolute.
        #expect(hello["scenes_dir"]?.stringValue == daemon.scenes.path)
        let epoch = try #require(hello["epoch"]?.stringValue)
        #expect(!epoch.isEmpty)
        #expect(hello.revision == 2)

        let list = try await client.ok("list")
        #expect(list["epoch"]?.stringValue == epoch)
        #expect(list.revision == 2)
        let scenes = try #require(list["scenes"]?.arrayValue)
        let byID = Dictionary(uniqueKeysWithValues: scenes.compactMap { s in s["scene"]?.stringValue.map { ($0, s) } })
        #expect(Set(byID.keys) == ["a", "c"])
        #expect(byID["a"]?["depth"]?.uint64Value == 3)
        #expect(byID["c"]?["depth"]?.uint64Value == 2)
        for scene in scenes {
            #expect(scene["version"]?.uint64Value == 1)
            #expect(scene["modified"]?.uint64Value ?? 0 >= 1)
        }

        let get = try await client.scene("a")
        #expect(get["scene"]?.stringValue == "a")
        #expect(get["format"]?.stringValue == "array")
        #expect(get["created"] == byID["a"]?["modified"])
        #expect(get["modified"] == byID["a"]?["modified"])
        #expect(get["epoch"]?.stringValue == epoch)
        #expect(get.revision == 2)
    }

    @Test func statsCountWhatHappened() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        let subscriber = try await daemon.connect()
        try await subscriber.subscribe()
        _ = try await subscriber.events(until: "synced")
        try daemon.writeScene("bad", "{")
        try await client.ok("set", ["scene": J.string("s"), "path": "[]"])
        try await subscriber.sync()
        #expect(subscriber.takeEvents().count == 2)

        let stats = try await client.ok("stats")
        #expect(stats["epoch"]?.stringValue == (try await client.clock().epoch))
        #expect(stats.revision == 1)
        #expect(stats["scenes"]?.uint64Value == 1)
        #expect(stats["clients"]?.uint64Value == 2)
        #expect(stats["subscribers"]?.uint64Value == 1)
        #expect(stats["uptime_s"]?.uint64Value != nil)
        // synced, the warning about bad.json and the change.
        #expect(stats["events_sent"]?.uint64Value ?? 0 >= 3)
        #expect(stats["events_dropped"]?.uint64Value == 0)
        #expect(stats["lagged"]?.uint64Value == 0)
        #expect(stats["file_errors"]?.uint64Value == 1)
        #expect(stats["snapshots"]?.uint64Value == 0)
        #expect(stats["last_snapshot"] == .null)
        #expect(stats["rss_bytes"]?.uint64Value ?? 0 > 1_000_000)

        subscriber.close()
        #expect(try await eventually { try await client.stat("clients") == 1 })
        #expect(try await client.stat("subscribers") == 0)
    }
}
