import Foundation
import SceneSyncCore
import Testing

/// Scene files as apps write them (§3): both formats, both ways of writing, deletes, names that are not scenes, and
/// files the daemon must reject while keeping the last good state.
@Suite struct SceneFileTests {
    static let codableFile = #"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#
    static let codableWire = #"[{"type":"MyApp.Recipe","value":{"applePie":{}}},{"type":"Swift.Int","value":42}]"#

    @Test func codableFileIsReadRootFirst() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        try daemon.writeScene("recipes", Self.codableFile)
        let client = try await daemon.connect()
        try await client.sync()
        let scene = try await client.scene("recipes")
        #expect(scene["format"]?.stringValue == "codable")
        #expect(scene["path"] == (try json(Self.codableWire)))
        #expect(scene["version"]?.uint64Value == 1)
        #expect(scene["created"] == scene["modified"])
    }

    @Test func arrayPrettyAndEmptyFiles() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        try daemon.writeScene("plain", #"[{"applePie":{}},{"chocolateCake":{}}]"#)
        try daemon.writeScene("pretty", "[\n  1,\n  2,\n  {\n    \"a\" : [ true, null ]\n  }\n]\n")
        try daemon.writeScene("empty", "[]")
        // Strings that are not `tag, item` pairs are an array path under `auto`, not an error.
        try daemon.writeScene("strings", #"["a","b","c"]"#)
        let client = try await daemon.connect()
        try await client.sync()

        let plain = try await client.scene("plain")
        #expect(plain["format"]?.stringValue == "array")
        #expect(plain["path"] == (try json(#"[{"value":{"applePie":{}}},{"value":{"chocolateCake":{}}}]"#)))
        let pretty = try await client.scene("pretty")
        #expect(pretty["format"]?.stringValue == "array")
        #expect(pretty["path"] == (try json(#"[{"value":1},{"value":2},{"value":{"a":[true,null]}}]"#)))
        let empty = try await client.scene("empty")
        #expect(empty["path"] == .array([]))
        #expect(empty["format"]?.stringValue == "array")
        let strings = try await client.scene("strings")
        #expect(strings["format"]?.stringValue == "array")
        #expect(strings["path"] == (try json(#"[{"value":"a"},{"value":"b"},{"value":"c"}]"#)))
        let list = try await client.ok("list")
        #expect(list["scenes"]?.arrayValue?.count == 4)
    }

    /// One write is one change, whether the writer renames a temp file over the scene file or rewrites it in place.
    @Test(arguments: [false, true])
    func eachWriteIsExactlyOneChange(inPlace: Bool) async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let watcher = try await daemon.connect()
        try await watcher.subscribe()
        _ = try await watcher.events(until: "synced")
        let write = { (id: String, content: String) async throws in
            if inPlace { try await daemon.rewriteScene(id, content) } else { try daemon.writeScene(id, content) }
        }

        try await write("s", "[1]")
        try await watcher.sync()
        let first = watcher.takeEvents().named("change")
        #expect(first.count == 1, "\(first.map(\.text))")
        #expect(first.first?["version"]?.uint64Value == 1)

        try await write("s", "[1,2]")
        try await watcher.sync()
        let second = watcher.takeEvents().named("change")
        #expect(second.count == 1, "\(second.map(\.text))")
        #expect(second.first?["version"]?.uint64Value == 2)
        #expect(second.first?["origin"] == (try json(#"{"source":"file"}"#)))

        let history = try await watcher.ok("history", ["scene": J.string("s")])
        #expect(history["records"]?.arrayValue?.compactMap { $0["version"]?.uint64Value } == [2, 1])
    }

    @Test func deletingTheFileDeletesTheScene() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        try daemon.writeScene("gone", "[1,2]")
        let client = try await daemon.connect()
        try await client.subscribe()
        try await client.sync()
        _ = client.takeEvents()

        try FileManager.default.removeItem(at: daemon.sceneFile("gone"))
        try await client.sync()
        let changes = client.takeEvents().named("change")
        #expect(changes.count == 1)
        #expect(changes.first?["kind"]?.stringValue == "delete")
        #expect(changes.first?["scene"]?.stringValue == "gone")
        #expect(changes.first?["path"] == nil)
        #expect(try await client.request("get", ["scene": J.string("gone")]).errorCode == "not_found")
    }

    @Test func namesThatAreNotScenesAreIgnored() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.subscribe()
        _ = try await client.events(until: "synced")
        for name in [".x.json", "a.json.tmp", "a.json~", "a.txt", "b.json.json"] {
            try Data("[1]".utf8).write(to: daemon.scenes.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(
            at: daemon.scenes.appendingPathComponent("d.json"), withIntermediateDirectories: false)
        try await client.sync()
        #expect(client.takeEvents().isEmpty)
        #expect(try await client.ok("list")["scenes"] == .array([]))

        // A rescan reads the directory itself, and ignores the same names.
        try await daemon.dropHook(".scenesync-test-overflow")
        try await client.sync()
        #expect(client.takeEvents().map { $0["code"]?.stringValue } == ["rescanned"])
        #expect(try await client.stat("file_errors") == 0)
        #expect(try await client.ok("list")["scenes"] == .array([]))

        // So does the scan at start.
        #expect(try await daemon.stop() == 0)
        try await daemon.start()
        let again = try await daemon.connect()
        #expect(try await again.stat("file_errors") == 0)
        #expect(try await again.ok("list")["scenes"] == .array([]))
    }

    /// A FIFO named like a scene file: reading it must not stop the daemon (opening one for reading waits for a
    /// writer). Neither the start scan, a rescan, nor a client's change over it waits; each is answered, and the
    /// scans count it as a file error, as they would an unreadable file.
    @Test func aFIFONamedLikeASceneFileStopsNothing() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        #expect(mkfifo(daemon.sceneFile("f").path, 0o644) == 0)
        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.stat("file_errors") == 1, "the start scan warns of it")
        try await daemon.dropHook(".scenesync-test-overflow")
        try await client.sync()
        #expect(try await client.stat("file_errors") == 2, "so does a rescan")
        #expect(try await client.ok("list")["scenes"] == .array([]), "it is no scene")

        let answer = try await client.request("set", ["scene": J.string("f"), "path": #"[{"value":1}]"#])
        #expect(answer["ok"] != nil || answer.errorCode != nil, "\(answer.text)")
        #expect(try await client.ok("list")["scenes"] != nil)
        let mode = try FileManager.default.attributesOfItem(atPath: daemon.sceneFile("f").path)[.type]
        #expect(mode as? FileAttributeType == .typeRegular, "the change's file replaced the FIFO")
    }

    // MARK: - Rejected files

    /// A rejected file: the scene keeps its last good state, subscribers get a warning naming the scene,
    /// `file_errors` counts it, the log names the file; the fixed file then merges normally.
    struct Rejection: Sendable, CustomTestStringConvertible {
        var name: String
        var content: String
        var config: String? = nil
        var warning = "invalid_file"
        var testDescription: String { name }
    }

    static let rejections: [Rejection] = [
        Rejection(name: "not JSON", content: "[1,"),
        Rejection(name: "not an array", content: #"{"a":1}"#),
        Rejection(
            name: "nested deeper than 256",
            content: String(repeating: "[", count: 257) + String(repeating: "]", count: 257)),
        Rejection(
            name: "too large", content: "[" + String(repeating: "1,", count: 60) + "1]",
            config: "scenes: {max_file_bytes: 100}\n", warning: "file_too_large"),
        Rejection(
            name: "too many elements", content: "[1,2,3,4]", config: "scenes: {max_depth: 3}\n",
            warning: "file_too_large"),
        Rejection(
            name: "odd length under pinned codable", content: #"["Swift.Int","1","Swift.Int"]"#,
            config: "scenes: {format: codable}\n"),
        Rejection(
            name: "unparsable item under pinned codable", content: #"["Swift.Int","{"]"#,
            config: "scenes: {format: codable}\n"),
    ]

    @Test(arguments: rejections)
    func rejectedFileKeepsTheLastGoodState(_ rejection: Rejection) async throws {
        let (name, content, config, warning) = (rejection.name, rejection.content, rejection.config, rejection.warning)
        let daemon = try DaemonProcess(config: config)
        defer { daemon.cleanup() }
        try await daemon.start()
        let good = #"["Swift.Int","7"]"#
        let client = try await daemon.connect()
        try daemon.writeScene("s", good)
        try await client.sync()
        let before = try await client.scene("s")
        #expect(before["version"]?.uint64Value == 1)
        try await client.subscribe(["s"])
        _ = try await client.events(until: "synced")
        let errorsBefore = try await client.stat("file_errors")

        try daemon.writeScene("s", content)
        let revision = try await client.sync()
        let events = client.takeEvents()
        #expect(events.named("change").isEmpty, "\(name): \(events.map(\.text))")
        let warnings = events.named("warning")
        #expect(warnings.count == 1, "\(name): \(events.map(\.text))")
        #expect(warnings.first?["code"]?.stringValue == warning, "\(name)")
        #expect(warnings.first?["scene"]?.stringValue == "s", "\(name)")
        #expect(warnings.first?["message"]?.stringValue?.isEmpty == false)
        #expect(try await client.scene("s")["path"] == before["path"], "\(name)")
        #expect(try await client.scene("s")["version"]?.uint64Value == 1, "\(name)")
        #expect(try await client.stat("file_errors") == errorsBefore + 1, "\(name)")
        #expect(revision == before.revision, "\(name): a rejected file must not use a revision")
        #expect(await daemon.logs(daemon.sceneFile("s").path), "\(name): the log names the file")

        try daemon.writeScene("s", #"["Swift.Int","8"]"#)
        try await client.sync()
        let fixed = client.takeEvents()
        #expect(fixed.named("change").count == 1, "\(name)")
        #expect(fixed.named("warning").isEmpty, "\(name)")
        #expect(try await client.scene("s")["path"] == (try json(#"[{"type":"Swift.Int","value":8}]"#)))
        #expect(try await client.scene("s")["version"]?.uint64Value == 2)
    }

    /// The same rejected bytes merged again (a file with them renamed over it again, a rewrite in place) are warned
    /// about once; other bad bytes are warned about, and so are the first ones again after a good file or a deletion.
    @Test func aRejectedFileIsWarnedAboutOnceUntilItChanges() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try daemon.writeScene("s", "[1]")
        try await client.sync()
        try await client.subscribe(["s"])
        _ = try await client.events(until: "synced")
        let errorsBefore = try await client.stat("file_errors")

        func warnings(after write: () async throws -> Void) async throws -> [JSONValue] {
            try await write()
            try await client.sync()
            return client.takeEvents().named("warning")
        }
        #expect(try await warnings { try daemon.writeScene("s", "[1,") }.count == 1)
        #expect(try await warnings { try daemon.writeScene("s", "[1,") }.isEmpty)
        #expect(try await warnings { try await daemon.rewriteScene("s", "[1,") }.isEmpty)
        #expect(try await client.stat("file_errors") == errorsBefore + 1)
        #expect(try await warnings { try daemon.writeScene("s", "{}") }.count == 1)
        #expect(try await warnings { try daemon.writeScene("s", "[2]") }.isEmpty)
        #expect(try await warnings { try daemon.writeScene("s", "[1,") }.count == 1)
        #expect(try await warnings { try FileManager.default.removeItem(at: daemon.sceneFile("s")) }.isEmpty)
        #expect(try await warnings { try daemon.writeScene("s", "[1,") }.count == 1)
        #expect(try await client.stat("file_errors") == errorsBefore + 4)
    }

    /// A warning about one scene goes only to subscriptions whose patterns match it.
    @Test func warningsGoToMatchingSubscriptionsOnly() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let matching = try await daemon.connect()
        try await matching.subscribe(["bad*"])
        _ = try await matching.events(until: "synced")
        let other = try await daemon.connect()
        try await other.subscribe(["good*"])
        _ = try await other.events(until: "synced")

        try daemon.writeScene("bad1", "not json")
        try await matching.sync()
        try await other.sync()
        #expect(matching.takeEvents().named("warning").count == 1)
        #expect(other.takeEvents().isEmpty)
    }
}
