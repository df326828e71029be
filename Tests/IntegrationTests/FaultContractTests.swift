import Foundation
import SceneSyncCore
import Testing

/// Details of §3–§5 in this revision of the contract: equal elements keep their bytes under a client `set`, a
/// deletion's version, an unreadable revision high-water mark, and the daemon's leftover temp files.
@Suite struct FaultContractTests {
    /// Elements of a `set` equal as JSON to the current ones (`1` for `1.0`, `{"k":1}` for `{"k" :1}`) keep the file's
    /// bytes; only the changed element is written anew.
    @Test func setKeepsTheBytesOfEqualElements() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("arr", #"[1.0, {"k" :1}, "x"]"#)
        try daemon.writeScene("cod", #"["T.b","\"x\"","T.a","{\"k\" :1.0}"]"#)
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.ok(
            "set", ["scene": J.string("arr"), "path": #"[{"value":1},{"value":{"k":1}},{"value":"y"}]"#])
        #expect(daemon.readScene("arr") == #"[1.0,{"k" :1},"y"]"#)
        try await client.ok(
            "set", ["scene": J.string("cod"), "path": #"[{"type":"T.a","value":{"k":1}},{"type":"T.b","value":"z"}]"#])
        #expect(daemon.readScene("cod") == #"["T.b","\"z\"","T.a","{\"k\" :1.0}"]"#)
    }

    /// A scene deleted by the start-up merge (`restore_missing: false`) gets version = its last version + 1.
    @Test func aDeletionAtStartUpHasTheNextVersion() async throws {
        let daemon = try DaemonProcess(config: "scenes: {restore_missing: false}\n")
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        for value in 1...3 { try await client.ok("set", ["scene": J.string("d"), "path": "[{\"value\":\(value)}]"]) }
        #expect(try await client.scene("d")["version"]?.uint64Value == 3)
        #expect(try await daemon.stop() == 0)
        try FileManager.default.removeItem(at: daemon.sceneFile("d"))

        try await daemon.start()
        let again = try await daemon.connect()
        let record = try #require(try await again.ok("history", ["scene": J.string("d")])["records"]?.arrayValue?.first)
        #expect(record["kind"]?.stringValue == "delete")
        #expect(record["version"]?.uint64Value == 4, "\(record.text)")
    }

    /// A high-water mark that cannot be read is an error at start, never a zero.
    @Test(arguments: ["garbage\n", "directory"])
    func anUnreadableRevisionMarkFailsTheStart(content: String) async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        try await daemon.connect().ok("set", ["scene": J.string("s"), "path": "[]"])
        #expect(try await daemon.stop() == 0)
        let mark = daemon.state.appendingPathComponent("revision")
        try FileManager.default.removeItem(at: mark)
        if content == "directory" {
            try FileManager.default.createDirectory(at: mark, withIntermediateDirectories: false)
        } else {
            try Data(content.utf8).write(to: mark)
        }
        let (status, output) = try await runScenesyncd(daemon.arguments, timeout: .seconds(10))
        #expect(status == 1, "\(content.debugDescription): \(output.suffix(1000))")
        #expect(
            output.split(separator: "\n").count == 1, "\(content.debugDescription): one line: \(output.suffix(1000))")
        #expect(output.hasPrefix("scenesyncd: "), "\(output.prefix(300))")
    }

    /// Temp files the daemon left behind (`.<ID>.json.<pid>.tmp`) are removed at start; other dot-files stay.
    @Test func leftoverDaemonTempFilesAreRemovedAtStart() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("a", "[1]")
        let leftovers = [".a.json.4242.tmp", ".b.json.1.tmp"]
        let others = [".keep", ".a.json.tmp", ".a.json.42x.tmp", ".notes.json", "a.json~", ".a.json.app.tmp"]
        for name in leftovers + others {
            try Data("[9]".utf8).write(to: daemon.scenes.appendingPathComponent(name))
        }
        try await daemon.start()
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: daemon.scenes.path))
        for name in leftovers { #expect(!present.contains(name), "\(name) was left behind") }
        for name in others { #expect(present.contains(name), "\(name) was removed") }
        #expect(try await daemon.connect().ok("list")["scenes"]?.arrayValue?.count == 1)
    }
}
