import Foundation
import SceneSyncCore
import Testing

/// An app rewriting a scene file in place, slowly, while a client changes the same scene (§3 "A file that a writer
/// has modified and still holds open is not yet a change"): the app's content is never lost silently, a half-written
/// file is never reported as invalid, and with `scenes.write_wait_ms: 0` the client's change is refused while the
/// file is open.
@Suite struct FaultSlowWriterTests {
    /// Opens `id`'s file with truncation and writes the first half of `content`; the caller writes the rest.
    static func startWriting(
        _ daemon: DaemonProcess, _ id: String, _ content: String
    ) throws -> (fd: Int32, rest: [UInt8]) {
        let bytes = Array(content.utf8)
        let fd = open(daemon.sceneFile(id).path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        try #require(fd >= 0)
        let half = bytes.count / 2
        #expect(bytes[..<half].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == half)
        return (fd, Array(bytes[half...]))
    }

    static func finishWriting(_ fd: Int32, _ rest: [UInt8]) {
        _ = rest.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    @Test func slowInPlaceWritesAreNeverLostToAClientChange() async throws {
        let rounds = Fault.rounds(6)
        let daemon = try DaemonProcess(config: "scenes: {write_wait_ms: 30000}\n")
        defer { daemon.cleanup() }
        try daemon.writeScene("s", #"[{"app":0}]"#)
        try await daemon.start()
        let client = try await daemon.connect()
        let watcher = try await daemon.connect()
        try await watcher.subscribe()
        _ = try await watcher.events(until: "synced")
        let errors = try await client.stat("file_errors")
        let observer = try await daemon.connect()

        for round in 1...rounds {
            let appContent = #"[{"app":\#(round)},{"padding":"\#(String(repeating: "p", count: 200))"}]"#
            let appPath = try #require(Fault.wirePath(ofArrayFile: Array(appContent.utf8)))
            let waits = try await observer.testCounter("writer_waits")
            let (fd, rest) = try Self.startWriting(daemon, "s", appContent)
            let id = try await client.send(
                "set", ["scene": J.string("s"), "path": #"[{"value":{"client":\#(round)}}]"#])
            // The app pauses with the file open until the client's change waits for it, as the daemon reports.
            try await observer.waitForTestCounter("writer_waits", above: waits)
            Self.finishWriting(fd, rest)
            let response = try await client.response(to: id)
            #expect(response.isOK, "round \(round): \(response.text)")
            try await watcher.sync()
            let events = watcher.takeEvents()
            let warnings = events.named("warning")
            #expect(warnings.isEmpty, "round \(round): \(warnings.map(\.text))")
            // The app's content is the state, or in the conflict record of the client's change.
            let state = try await client.scene("s")["path"]
            let clientChange = events.named("change").last { $0["origin"]?["source"]?.stringValue == "client" }
            let kept = state == appPath || clientChange?["conflict"]?["path"] == appPath
            #expect(kept, "round \(round): the app's write was lost: \(events.map(\.text)) state \(state?.text ?? "-")")
        }
        #expect(try await client.stat("file_errors") == errors, "a half-written file was read as invalid")
    }

    @Test func withoutWaitingAChangeToAnOpenFileIsRefused() async throws {
        let daemon = try DaemonProcess(config: "scenes: {write_wait_ms: 0}\n")
        defer { daemon.cleanup() }
        try daemon.writeScene("s", #"[{"app":0}]"#)
        try await daemon.start()
        let client = try await daemon.connect()
        let before = try await client.scene("s")
        let appContent = #"[{"app":1},{"padding":"\#(String(repeating: "p", count: 200))"}]"#
        let (fd, rest) = try Self.startWriting(daemon, "s", appContent)
        let refused = try await client.request("set", ["scene": J.string("s"), "path": #"[{"value":{"client":1}}]"#])
        Self.finishWriting(fd, rest)
        #expect(refused.errorCode == "unavailable", "\(refused.text)")
        // The close may count a moment later (a child another test is starting holds the descriptor until its
        // exec; see PrivateFileTable): wait for the merge instead of a sync.
        let appPath = Fault.wirePath(ofArrayFile: Array(appContent.utf8))
        _ = try await eventually { try await client.scene("s")["path"] == appPath }
        let after = try await client.scene("s")
        #expect(after["path"] == appPath, "\(after.text) vs \(before.text)")
        #expect(daemon.readScene("s") == appContent)
        #expect(try await client.stat("file_errors") == 0)
    }
}
