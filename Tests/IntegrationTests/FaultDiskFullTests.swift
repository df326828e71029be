import Foundation
import SceneSyncCore
import Testing

/// Full file systems (§4): a client change whose file cannot be written is refused and changes nothing; a file
/// write that cannot get a revision (the reservation of the next block fails) is reported, not dropped, and merged
/// once there is space again; then everything recovers.
@Suite struct FaultDiskFullTests {
    /// Small tmpfs mounts for the scenes and state directories, inside the daemon's temp directory; unmounted
    /// (lazily, so a killed daemon's open files cannot keep them) at the end.
    struct Mounts {
        var paths: [String] = []

        mutating func mount(_ url: URL, size: String) async throws {
            let mount = try #require(HostCommand.find("mount"), "mount (util-linux) is needed")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            let result = try await HostCommand.run(mount, ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", url.path])
            try #require(result.status == 0, "mount tmpfs on \(url.path): \(result.output)")
            paths.append(url.path)
        }

        func unmount() async {
            guard let umount = HostCommand.find("umount") else { return }
            for path in paths.reversed() { _ = try? await HostCommand.run(umount, ["-l", path]) }
        }
    }

    /// Fills the file system of `directory` with one file; returns its path (delete it to free the space).
    static func fill(_ directory: URL) throws -> String {
        let path = directory.appendingPathComponent(".filler").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        defer { close(fd) }
        let chunk = [UInt8](repeating: 0x78, count: 4096)
        while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        // The last partial block, down to single bytes.
        var byte: UInt8 = 0x78
        while write(fd, &byte, 1) > 0 {}
        return path
    }

    @Test func fullDisksRefuseOrReportAndThenRecover() async throws {
        try TestEnvironment.requireRoot("mounting a small tmpfs needs root")
        let daemon = try DaemonProcess()
        // Blocks of 64 revisions (a debug override of 4,096): the full state directory is met within a few hundred
        // changes, not thousands.
        daemon.extraEnvironment["SCENESYNC_TEST_REVISION_BLOCK"] = "64"
        var mounts = Mounts()
        defer {
            daemon.process?.signal(SIGKILL)
        }
        try await mounts.mount(daemon.scenes, size: "256k")
        try await mounts.mount(daemon.state, size: "256k")
        do {
            try await run(daemon)
        } catch {
            Issue.record(error)
        }
        _ = try? await daemon.stopped(SIGKILL)
        await mounts.unmount()
        daemon.cleanup()
    }

    func run(_ daemon: DaemonProcess) async throws {
        try daemon.writeScene("a", #"[{"v":0}]"#)
        try await daemon.start()
        let client = try await daemon.connect()
        let watcher = try await daemon.connect()
        try await watcher.subscribe()
        _ = try await watcher.events(until: "synced")

        // Scenes directory full: the change is refused and nothing changes.
        let before = try await client.scene("a")
        let clock = try await client.clock()
        let filler = try Self.fill(daemon.scenes)
        let big = String(repeating: "x", count: 8000)
        let refused = try await client.request("set", ["scene": J.string("a"), "path": #"[{"value":"\#(big)"}]"#])
        #expect(refused.errorCode == "unavailable", "\(refused.text)")
        #expect(try await client.scene("a").sceneMembers == before.sceneMembers)
        #expect(daemon.readScene("a") == #"[{"v":0}]"#)
        #expect(try await client.clock() == clock)
        try FileManager.default.removeItem(atPath: filler)
        #expect(try await client.request("set", ["scene": J.string("a"), "path": #"[{"value":1}]"#]).isOK)

        // State directory full: client changes go on until the next block of revisions must be reserved.
        let stateFiller = try Self.fill(daemon.state)
        var failed = false
        var value = 1
        while !failed, value < 3 * 64 {
            var ids: [Int] = []
            for _ in 0..<64 {
                value += 1
                ids.append(try await client.send("set", ["scene": J.string("a"), "path": #"[{"value":\#(value)}]"#]))
            }
            for id in ids {
                let response = try await client.response(to: id)
                if !response.isOK, !failed {
                    #expect(response.errorCode == "unavailable", "\(response.text)")
                    failed = true
                }
            }
        }
        let failedAt: UInt64? = failed ? try await client.clock().revision : nil
        let stuckAt = try #require(failedAt, "no change failed with the state directory full")
        _ = watcher.takeEvents()
        try await watcher.sync()
        _ = watcher.takeEvents()

        // An app's write now cannot get a revision: it must not vanish silently.
        try daemon.writeScene("app", #"[{"app":1}]"#)
        try await watcher.sync()
        let events = watcher.takeEvents()
        let reported = events.contains { event in
            event.eventName == "warning"
                && (event["scene"]?.stringValue == "app" || event["code"]?.stringValue == "write_failed")
        }
        let merged = events.contains { $0.eventName == "change" && $0["scene"]?.stringValue == "app" }
        #expect(reported || merged, "the app's write vanished: \(events.map(\.text))")
        #expect(try await client.clock().revision == stuckAt || merged)

        // Space again: the next change succeeds, and the app's write is merged.
        try FileManager.default.removeItem(atPath: stateFiller)
        let next = try await client.request("set", ["scene": J.string("a"), "path": #"[{"value":"after"}]"#])
        #expect(next.isOK, "\(next.text)")
        if !merged {
            // Waits for the app's change, event by event, up to the read timeout.
            watcher.timeout = .seconds(10)
            var found = false
            while !found, let event = try? await watcher.nextEvent() {
                found = event.eventName == "change" && event["scene"]?.stringValue == "app"
            }
            #expect(found, "the app's write was not merged once there was space again")
        }
        let app = try? await client.scene("app")
        #expect(app?["path"] == (try json(#"[{"value":{"app":1}}]"#)), "the app's scene: \(app?.text ?? "none")")
    }
}
