import Foundation
import SceneSyncCore
import Testing

/// What an operator meets around a start and a stop, beyond the snapshot tests: SIGINT, the state directory's
/// leftovers and lost revision mark, the socket's default mode, and descriptors over many connections.
@Suite struct StartAndStopTests {
    /// SIGINT (a Ctrl-C on `make run`) is a graceful shutdown like SIGTERM (§7): the `shutdown` event, the final
    /// snapshot, exit 0, and the next start keeps the epoch.
    @Test func sigintShutsDownGracefully() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        try await client.ok("set", ["scene": J.string("alpha"), "path": #"[{"value":1}]"#])
        let clock = try await client.clock()
        #expect(try await daemon.stop(SIGINT) == 0)
        #expect(try await client.events(until: "shutdown").named("shutdown").count == 1)
        let snapshot = try daemon.snapshot(try #require(daemon.snapshotFiles().last))
        #expect(snapshot["reason"]?.stringValue == "shutdown")
        #expect(snapshot.revision == clock.revision)
        try await daemon.start()
        #expect(try await daemon.connect().clock() == clock)
    }

    /// The temp files the daemon's own atomic writes leave when it dies mid-write are removed at the next start
    /// (§5), and nothing else in the state directory is.
    @Test func leftoverTempFilesInTheStateDirectoryAreRemovedAtStart() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        #expect(try await daemon.stop() == 0)
        let leftovers = [".revision.tmp", ".clean-shutdown.tmp", "snapshots/.snapshot-4711.tmp"]
        let others = ["notes.txt", ".revision.tmp~", "snapshots/.snapshot-x.tmp", "snapshots/keep.json"]
        for name in leftovers + others { try Data("x".utf8).write(to: daemon.state.appendingPathComponent(name)) }
        try await daemon.start()
        for name in leftovers {
            #expect(!FileManager.default.fileExists(atPath: daemon.state.appendingPathComponent(name).path), "\(name)")
        }
        for name in others {
            #expect(FileManager.default.fileExists(atPath: daemon.state.appendingPathComponent(name).path), "\(name)")
        }
    }

    /// A lost revision high-water mark with snapshots present (§4): a new epoch, with revisions continuing above
    /// the newest snapshot's, never from zero.
    @Test func aMissingRevisionMarkStartsANewEpochAboveTheNewestSnapshot() async throws {
        let (daemon, client) = try await SnapshotRestoreTests.start()
        defer { daemon.cleanup() }
        for n in 1...5 { try await client.ok("set", ["scene": J.string("alpha"), "path": "[{\"value\":\(n)}]"]) }
        let clock = try await client.clock()
        #expect(try await daemon.stop() == 0)
        try FileManager.default.removeItem(at: daemon.state.appendingPathComponent("revision"))

        try await daemon.start()
        let again = try await daemon.connect()
        let restarted = try await again.clock()
        #expect(restarted.epoch != clock.epoch, "a lost mark cannot prove continuity")
        #expect(restarted.revision >= clock.revision)
        let next = try await again.ok("set", ["scene": J.string("alpha"), "path": "[]"])
        #expect(try #require(next.revision) > clock.revision)
        #expect(FileManager.default.fileExists(atPath: daemon.state.appendingPathComponent("revision").path))
    }

    /// Without `socket.mode`, the socket is created with mode 0660 (§8): the daemon's group may connect, others not.
    @Test func theSocketsDefaultModeIs0660() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
        let mode = try #require((attributes[.posixPermissions] as? NSNumber)?.intValue)
        #expect(mode == 0o660, "socket mode \(String(mode, radix: 8))")
    }

    /// 10,000 connections opened and closed leave the daemon with the descriptors it had (counted in
    /// `/proc/PID/fd`): none leaks per connection.
    @Test func tenThousandConnectionsLeakNoDescriptor() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.sync()
        let before = try Self.descriptors(of: daemon.pid)
        let socketPath = daemon.socketPath
        let failures = await DedicatedThread.run("10,000 connections") { () -> Int in
            var failures = 0
            for _ in 0..<10_000 {
                let (fd, _) = SocketClient.openConnection(path: socketPath, timeout: .seconds(10))
                if fd >= 0 { close(fd) } else { failures += 1 }
            }
            return failures
        }
        #expect(failures == 0)
        // The daemon has seen every close once only our own connection is left. The engine forgets a connection
        // as its reader ends, and the event loop closes the socket right after: the descriptors are counted once
        // they are closed, and a leak keeps them open past the wait.
        #expect(try await eventually(timeout: .seconds(60)) { try await client.stat("clients") == 1 })
        _ = try await eventually(timeout: .seconds(30)) { try Self.descriptors(of: daemon.pid).count <= before.count }
        let after = try Self.descriptors(of: daemon.pid)
        let opened = after.subtracting(before).sorted()
        #expect(
            after.count <= before.count,
            "descriptors: \(before.count) before, \(after.count) after 10,000 connections; new: \(opened)")
    }

    /// The daemon's open descriptors, each as its number and what it points at (`/proc/PID/fd`).
    static func descriptors(of pid: Int32) throws -> Set<String> {
        let directory = "/proc/\(pid)/fd"
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        return Set(
            names.map { name in
                let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name))
                return name + " -> " + (target ?? "gone")
            })
    }
}
