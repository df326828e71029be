import Foundation
import SceneSyncCore
import Testing

/// An app's write that lands after the daemon last looked at a scene file and before the daemon renames its own
/// content over it (§3). The test hook `.scenesync-test-race-<ID>.json` (`SCENESYNC_TEST_HOOKS=1`, which every
/// test daemon has) lands it in exactly that window: the daemon renames it over the scene file right before its
/// own rename, as an app's atomic write would be. Without the exchange-rename the app's content would be
/// overwritten unread, in no change and no conflict record.
@Suite struct WriteRaceTests {
    /// Puts an app's write in the window of the daemon's next write of `scene`; an empty one deletes the file.
    static func landAppWrite(_ daemon: DaemonProcess, scene: String, _ content: String) throws {
        try Data(content.utf8).write(to: daemon.scenes.appendingPathComponent(".scenesync-test-race-\(scene).json"))
    }

    /// The change events of the last step: exactly two new revisions, the app's and the client's, and no third one
    /// once the watcher has reported the app's rename and the daemon's (the daemon reads back its own bytes).
    /// - Returns: the app's change and the client's.
    static func twoChanges(
        _ client: SocketClient, before: UInt64, response: JSONValue
    ) async throws -> (JSONValue, JSONValue) {
        #expect(response.revision == before + 2)
        #expect(try await client.sync() == before + 2, "a second write-back made a revision")
        let changes = client.takeEvents().named("change")
        #expect(changes.count == 2, "\(changes.map(\.text))")
        let app = try #require(changes.first)
        let change = try #require(changes.last)
        #expect(app.revision == before + 1)
        #expect(app["origin"]?["source"]?.stringValue == "file")
        #expect(change.revision == before + 2)
        #expect(change["origin"]?["source"]?.stringValue == "client")
        return (app, change)
    }

    @Test func aClientSetKeepsTheAppWriteItDisplaces() async throws {
        let (daemon, client) = try await ClientChangeTests.start(["s": "[1]"])
        defer { daemon.cleanup() }
        let before = try await client.sync()
        try Self.landAppWrite(daemon, scene: "s", "[2]")

        let response = try await client.ok("set", ["scene": J.string("s"), "path": #"[{"value":3}]"#])
        #expect(response["version"]?.uint64Value == 3)
        let (app, change) = try await Self.twoChanges(client, before: before, response: response)
        let appPath = try json(#"[{"value":2}]"#)
        #expect(app["path"] == appPath)
        #expect(app["version"]?.uint64Value == 2)
        #expect(change["path"] == (try json(#"[{"value":3}]"#)))
        #expect(change["version"]?.uint64Value == 3)
        #expect(change["conflict"]?["path"] == appPath)
        #expect(change["conflict"]?["origin"]?["source"]?.stringValue == "file")

        // The file is the daemon's content; the hook's file is used up, and no temp file is left.
        #expect(daemon.readScene("s") == "[3]")
        let names = try FileManager.default.contentsOfDirectory(atPath: daemon.scenes.path)
        #expect(names == ["s.json"], "\(names)")
        let history = try #require(try await client.ok("history", ["scene": J.string("s")])["records"]?.arrayValue)
        #expect(history.contains { $0["path"] == appPath && $0["origin"]?["source"]?.stringValue == "file" })
        #expect(history.contains { $0["conflict"]?["path"] == appPath })
        let scene = try await client.ok("get", ["scene": J.string("s")])
        #expect(scene["version"]?.uint64Value == 3)
    }

    /// A push was planned on the state before the app's write: the daemon's content is that state plus the pushed
    /// element, and it overwrites the app's write, which its conflict record keeps.
    @Test func aClientPushKeepsTheAppWriteItDisplaces() async throws {
        let (daemon, client) = try await ClientChangeTests.start(["s": "[1]"])
        defer { daemon.cleanup() }
        let before = try await client.sync()
        try Self.landAppWrite(daemon, scene: "s", "[2,2]")

        let response = try await client.ok("push", ["scene": J.string("s"), "elements": #"[{"value":3}]"#])
        let (app, change) = try await Self.twoChanges(client, before: before, response: response)
        let appPath = try json(#"[{"value":2},{"value":2}]"#)
        #expect(app["path"] == appPath)
        #expect(change["path"] == (try json(#"[{"value":1},{"value":3}]"#)))
        #expect(change["conflict"]?["path"] == appPath)
        #expect(daemon.readScene("s") == "[1,3]")
    }

    @Test func aClientDeleteKeepsTheAppWriteItDisplaces() async throws {
        let (daemon, client) = try await ClientChangeTests.start(["s": "[1]"])
        defer { daemon.cleanup() }
        let before = try await client.sync()
        try Self.landAppWrite(daemon, scene: "s", "[2]")

        let response = try await client.ok("delete", ["scene": J.string("s")])
        let (app, change) = try await Self.twoChanges(client, before: before, response: response)
        let appPath = try json(#"[{"value":2}]"#)
        #expect(app["path"] == appPath)
        #expect(change["kind"]?.stringValue == "delete")
        #expect(change["version"]?.uint64Value == 3)
        #expect(change["conflict"]?["path"] == appPath)
        #expect(daemon.sceneBytes("s") == nil)
    }

    /// The app removed the file in the window: its removal is a change of its own, and the push creates the scene
    /// again, at version 1 (§4).
    @Test func aClientPushAfterTheAppRemovedTheFileInTheWindow() async throws {
        let (daemon, client) = try await ClientChangeTests.start(["s": "[1]"])
        defer { daemon.cleanup() }
        let before = try await client.sync()
        try Self.landAppWrite(daemon, scene: "s", "")

        let response = try await client.ok("push", ["scene": J.string("s"), "elements": #"[{"value":3}]"#])
        #expect(response["version"]?.uint64Value == 1)
        let (app, change) = try await Self.twoChanges(client, before: before, response: response)
        #expect(app["kind"]?.stringValue == "delete")
        #expect(change["kind"]?.stringValue == "set")
        #expect(change["version"]?.uint64Value == 1)
        #expect(daemon.readScene("s") == "[1,3]")
    }

    /// Without a window hit, nothing changes: one revision, no conflict (the exchange displaces the daemon's own
    /// last write, which it knows).
    @Test func aWriteThatDisplacesOnlyTheDaemonsOwnFileIsOneChange() async throws {
        let (daemon, client) = try await ClientChangeTests.start(["s": "[1]"])
        defer { daemon.cleanup() }
        for value in 2...4 {
            let before = try await client.sync()
            let response = try await client.ok("set", ["scene": J.string("s"), "path": "[{\"value\":\(value)}]"])
            #expect(response.revision == before + 1)
            #expect(try await client.sync() == before + 1)
            let changes = client.takeEvents().named("change")
            #expect(changes.count == 1, "\(changes.map(\.text))")
            #expect(changes.first?["conflict"] == nil)
        }
        #expect(daemon.readScene("s") == "[4]")
    }
}
