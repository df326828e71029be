import Foundation
import SceneSyncCore
import Testing

/// Client changes (§4, §6): written back to the scene files in the file's own format and byte for byte where
/// nothing changed, silent when read back, compare-and-set, and the conflict record when a client overwrites an
/// app's write the daemon had not read yet.
@Suite struct ClientChangeTests {
    /// Starts a daemon with `files` in place, and a client subscribed to everything past the initial state.
    static func start(
        _ files: [String: String] = [:], config: String? = nil
    ) async throws -> (DaemonProcess, SocketClient) {
        let daemon = try DaemonProcess(config: config)
        for (id, content) in files { try Data(content.utf8).write(to: daemon.sceneFile(id)) }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.subscribe()
        _ = try await client.events(until: "synced")
        return (daemon, client)
    }

    /// Exactly one change event since the last call, and after a `sync` no revision beyond the one the request
    /// answered: the daemon's own write, read back by the watcher, is not a second change.
    static func expectOneSilentChange(_ client: SocketClient, response: JSONValue) async throws -> JSONValue {
        let revision = try #require(response.revision)
        #expect(try await client.sync() == revision, "reading back the daemon's own write made a revision")
        let changes = client.takeEvents().named("change")
        #expect(changes.count == 1, "\(changes.map(\.text))")
        #expect(changes.first?.revision == revision)
        return try #require(changes.first)
    }

    @Test func pushOntoCodableSceneWritesTopFirstCompact() async throws {
        let (daemon, client) = try await Self.start(["recipes": SceneFileTests.codableFile])
        defer { daemon.cleanup() }
        let response = try await client.ok(
            "push",
            ["scene": J.string("recipes"), "elements": #"[{"type":"Swift.String","value":"x"}]"#])
        #expect(response["scene"]?.stringValue == "recipes")
        #expect(response["version"]?.uint64Value == 2)
        #expect(
            daemon.readScene("recipes")
                == #"["Swift.String","\"x\"","Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#)
        let change = try await Self.expectOneSilentChange(client, response: response)
        #expect(change["kind"]?.stringValue == "set")
        #expect(change["format"]?.stringValue == "codable")
        #expect(change["origin"]?["source"]?.stringValue == "client")
        #expect(change["origin"]?["uid"]?.uint64Value == UInt64(getuid()))
        #expect(change["origin"]?["pid"]?.uint64Value == UInt64(getpid()))
        #expect(change["conflict"] == nil)
        #expect(
            change["path"]
                == (try json(
                    #"[{"type":"MyApp.Recipe","value":{"applePie":{}}},{"type":"Swift.Int","value":42},"#
                        + #"{"type":"Swift.String","value":"x"}]"#)))
        #expect(try await client.ok("history", ["scene": J.string("recipes")])["records"]?.arrayValue?.count == 2)
    }

    /// The client name given in `hello` appears in the origin of its changes.
    @Test func originNamesTheClient() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("hello", ["client": J.string("test-app")])
        let response = try await client.ok("set", ["scene": J.string("a"), "path": #"[{"value":1}]"#])
        let change = try await Self.expectOneSilentChange(client, response: response)
        #expect(change["origin"]?["client"]?.stringValue == "test-app")
    }

    @Test func setPopAndDeleteRewriteTheFile() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let scene = J.string("nav")

        let created = try await client.ok(
            "set", ["scene": scene, "path": #"[{"value":1},{"value":{"b":2}},{"value":3}]"#])
        #expect(created["version"]?.uint64Value == 1)
        #expect(daemon.readScene("nav") == #"[1,{"b":2},3]"#)
        _ = try await Self.expectOneSilentChange(client, response: created)

        let popped = try await client.ok("pop", ["scene": scene, "count": "2"])
        #expect(popped["version"]?.uint64Value == 2)
        #expect(daemon.readScene("nav") == "[1]")
        _ = try await Self.expectOneSilentChange(client, response: popped)

        let root = try await client.ok("pop", ["scene": scene, "to_root": "true"])
        #expect(daemon.readScene("nav") == "[]")
        _ = try await Self.expectOneSilentChange(client, response: root)
        #expect(try await client.scene("nav")["path"] == .array([]))

        // An empty scene takes the format of what it receives next.
        let typed = try await client.ok("push", ["scene": scene, "elements": #"[{"type":"App.Page","value":"p"}]"#])
        #expect(daemon.readScene("nav") == #"["App.Page","\"p\""]"#)
        #expect(try await client.scene("nav")["format"]?.stringValue == "codable")
        _ = try await Self.expectOneSilentChange(client, response: typed)

        let deleted = try await client.ok("delete", ["scene": scene])
        #expect(daemon.readScene("nav") == nil)
        let change = try await Self.expectOneSilentChange(client, response: deleted)
        #expect(change["kind"]?.stringValue == "delete")
        #expect(try await client.request("get", ["scene": scene]).errorCode == "not_found")
    }

    /// `set` picks `codable` when every element has a type, else `array`, unless `format` says otherwise.
    @Test func setChoosesTheFormat() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        try await client.ok("set", ["scene": J.string("typed"), "path": #"[{"type":"A.b","value":[1]}]"#])
        #expect(daemon.readScene("typed") == #"["A.b","[1]"]"#)
        try await client.ok("set", ["scene": J.string("plain"), "path": #"[{"value":"s"}]"#])
        #expect(daemon.readScene("plain") == #"["s"]"#)
        try await client.ok("set", ["scene": J.string("empty"), "path": "[]", "format": J.string("codable")])
        #expect(daemon.readScene("empty") == "[]")
        #expect(try await client.scene("empty")["format"]?.stringValue == "codable")
        try await client.sync()
        #expect(client.takeEvents().named("change").count == 3)
    }

    /// A request whose result equals the current state is no change: no revision, no event, no write.
    @Test func identicalSetIsNoChange() async throws {
        let (daemon, client) = try await Self.start(["s": "[1, 2]"])
        defer { daemon.cleanup() }
        let before = try await client.sync()
        let response = try await client.ok("set", ["scene": J.string("s"), "path": #"[{"value":1},{"value":2.0}]"#])
        #expect(response.revision == before)
        #expect(response["version"]?.uint64Value == 1)
        #expect(try await client.sync() == before)
        #expect(client.takeEvents().isEmpty)
        #expect(daemon.readScene("s") == "[1, 2]")
    }

    /// Elements the change did not touch keep their exact bytes, escapes and inner spaces included.
    @Test func untouchedElementsKeepTheirBytes() async throws {
        let (daemon, client) = try await Self.start([
            "arr": #"[ {"url":"a\/b"} , { "k" : 1 },  "\u00e9" ]"#,
            "cod": #"["T.b", "{ \"u\" : \"a\\/b\" }", "T.a","[1, 2]"]"#,
        ])
        defer { daemon.cleanup() }
        try await client.ok("push", ["scene": J.string("arr"), "elements": #"[{"value":2}]"#])
        #expect(daemon.readScene("arr") == #"[{"url":"a\/b"},{ "k" : 1 },"\u00e9",2]"#)
        try await client.ok("push", ["scene": J.string("cod"), "elements": #"[{"type":"T.c","value":null}]"#])
        #expect(daemon.readScene("cod") == #"["T.c","null","T.b","{ \"u\" : \"a\\/b\" }","T.a","[1, 2]"]"#)
        try await client.ok("pop", ["scene": J.string("cod"), "count": "2"])
        #expect(daemon.readScene("cod") == #"["T.a","[1, 2]"]"#)
        try await client.ok("pop", ["scene": J.string("arr")])
        #expect(daemon.readScene("arr") == #"[{"url":"a\/b"},{ "k" : 1 },"\u00e9"]"#)
        try await client.sync()
        #expect(client.takeEvents().named("change").count == 4)
    }

    // MARK: - Compare-and-set

    @Test func ifVersionMismatchIsAConflictWithTheCurrentScene() async throws {
        let (daemon, client) = try await Self.start(["s": "[1]"])
        defer { daemon.cleanup() }
        try await client.sync()
        let current = try await client.scene("s")
        let revision = try #require(current.revision)
        for (op, fields) in [
            ("set", ["path": #"[{"value":2}]"#]), ("push", ["elements": #"[{"value":2}]"#]), ("pop", [:]),
            ("delete", [:]),
        ] {
            var request = fields
            request["scene"] = J.string("s")
            request["if_version"] = "2"
            let response = try await client.request(op, request)
            #expect(response.errorCode == "conflict", "\(op): \(response.text)")
            let reported = try #require(response["error"]?["current"], "\(op)")
            for key in ["scene", "version", "created", "modified", "format", "path"] {
                #expect(reported[key] == current[key], "\(op): \(key)")
            }
            #expect(try await client.request(op, request.merging(["if_version": "0"]) { $1 }).errorCode == "conflict")
        }
        #expect(try await client.sync() == revision)
        #expect(client.takeEvents().isEmpty)
        #expect(daemon.readScene("s") == "[1]")

        let matched = try await client.ok(
            "push", ["scene": J.string("s"), "elements": #"[{"value":2}]"#, "if_version": "1"])
        #expect(matched["version"]?.uint64Value == 2)
    }

    @Test func ifVersionOnAMissingScene() async throws {
        let (daemon, client) = try await Self.start()
        defer { daemon.cleanup() }
        let scene = J.string("new")
        let mismatch = try await client.request("set", ["scene": scene, "path": "[]", "if_version": "1"])
        #expect(mismatch.errorCode == "conflict")
        #expect(mismatch["error"]?["current"] == .null)
        #expect(try await client.request("get", ["scene": scene]).errorCode == "not_found")
        #expect(daemon.readScene("new") == nil)

        let created = try await client.ok("push", ["scene": scene, "elements": #"[{"value":1}]"#, "if_version": "0"])
        #expect(created["version"]?.uint64Value == 1)
        let again = try await client.request(
            "push", ["scene": scene, "elements": #"[{"value":1}]"#, "if_version": "0"])
        #expect(again.errorCode == "conflict")
        #expect(again["error"]?["current"]?["version"]?.uint64Value == 1)

        // Without if_version, pop and delete need the scene to exist.
        #expect(try await client.request("pop", ["scene": J.string("other")]).errorCode == "not_found")
        #expect(try await client.request("delete", ["scene": J.string("other")]).errorCode == "not_found")
    }

    /// With `scenes.write_wait_ms: 0`, a change to a scene whose file an app holds open for writing is refused at
    /// once with `unavailable`, and nothing changes; after the app closes the file, its content is merged.
    @Test func aChangeToAFileStillBeingWrittenIsRefusedWithoutAWait() async throws {
        let daemon = try DaemonProcess(config: "scenes:\n  write_wait_ms: 0\n")
        defer { daemon.cleanup() }
        try daemon.writeScene("s", "[1]")
        try await daemon.start()
        let client = try await daemon.connect()
        let before = try await client.sync()
        let fd = open(daemon.sceneFile("s").path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        try #require(fd >= 0)
        _ = write(fd, "[2", 2)
        let refused = try await client.request("set", ["scene": J.string("s"), "path": #"[{"value":9}]"#])
        #expect(refused.errorCode == "unavailable", "\(refused.text)")
        #expect(try await client.sync() == before)
        _ = write(fd, "]", 1)
        close(fd)
        // A child another test is starting may hold the descriptor a moment longer, and the close counts only once
        // it lets go (see PrivateFileTable): wait for the merge rather than sync right away.
        let merged = try json(#"[{"value":2}]"#)
        #expect(try await eventually { try await client.ok("get", ["scene": J.string("s")])["path"] == merged })
        #expect(try await client.sync() == before + 1)
        #expect(try await client.ok("stats")["file_errors"]?.uint64Value == 0)
    }

    // MARK: - File versus client

    /// An app rewrites the scene file in place and, while it still holds the file open, a client pushes. The push
    /// waits for the app to close the file (§3, `scenes.write_wait_ms`), never reading it half-written: the app's
    /// write becomes its own change, and the client's change, applied on top of it, carries the app's path in its
    /// conflict record; the file ends up holding the merged state.
    @Test func clientChangeOverAnUnreadFileRecordsTheConflict() async throws {
        // A long wait: on a loaded machine the app's close must still come within it.
        let (daemon, client) = try await Self.start(
            ["s": #"["App.Page","1"]"#], config: "scenes:\n  write_wait_ms: 30000\n")
        defer { daemon.cleanup() }
        let before = try await client.sync()

        let fd = open(daemon.sceneFile("s").path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        try #require(fd >= 0)
        let appContent = Array(#"["App.Page","2","App.Page","1"]"#.utf8)
        #expect(appContent.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == appContent.count)

        // The app closes the file once the push is waiting for it, as the daemon's own counter reports, so the
        // push cannot have been decided before the close.
        let observer = try await daemon.connect()
        let waits = try await observer.testCounter("writer_waits")
        let push = try await client.send(
            "push", ["scene": J.string("s"), "elements": #"[{"type":"App.Page","value":3}]"#])
        try await observer.waitForTestCounter("writer_waits", above: waits)
        close(fd)
        let response = try await client.response(to: push)
        #expect(response.isOK, "\(response.text)")
        #expect(response.revision == before + 2)
        #expect(try await client.sync() == before + 2)

        let changes = client.takeEvents().named("change")
        #expect(changes.count == 2, "\(changes.map(\.text))")
        let appPath = try json(#"[{"type":"App.Page","value":1},{"type":"App.Page","value":2}]"#)
        let fileChange = try #require(changes.first)
        #expect(fileChange["origin"]?["source"]?.stringValue == "file")
        #expect(fileChange["path"] == appPath)
        let clientChange = try #require(changes.last)
        #expect(clientChange["origin"]?["source"]?.stringValue == "client")
        #expect(clientChange["conflict"]?["path"] == appPath)
        #expect(clientChange["conflict"]?["origin"]?["source"]?.stringValue == "file")
        #expect(clientChange["version"]?.uint64Value == 3)

        #expect(daemon.readScene("s") == #"["App.Page","3","App.Page","2","App.Page","1"]"#)
        let records = try #require(try await client.ok("history", ["scene": J.string("s")])["records"]?.arrayValue)
        #expect(records.first?["conflict"]?["path"] == appPath)
    }
}
