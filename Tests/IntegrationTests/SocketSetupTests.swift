import Foundation
import SceneSyncCore
import Testing

/// How the control socket comes into being (§8), and what a client the kernel cannot name may do.
@Suite struct SocketSetupTests {
    /// The socket path appears at once with its configured mode: it is moved into place, never created there and
    /// changed after (a window in which the umask decides who may connect). Watched with inotify from before the
    /// start: the path's only event is the move.
    @Test func theSocketAppearsWithItsFinalModeByARename() async throws {
        let daemon = try DaemonProcess(config: "socket: {mode: \"0600\"}\n")
        defer { daemon.cleanup() }
        let inotify = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(inotify >= 0)
        defer { close(inotify) }
        try #require(inotify_add_watch(inotify, daemon.root.path, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0)
        try await daemon.start()

        var events: [(mask: UInt32, name: String)] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = read(inotify, &buffer, buffer.count)
            guard count > 0 else { break }
            var offset = 0
            while offset < count {
                let (mask, length) = buffer.withUnsafeBytes { raw in
                    (
                        raw.load(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(raw.load(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                let nameBytes = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                events.append((mask, String(decoding: nameBytes, as: UTF8.self)))
                offset += 16 + length
            }
        }
        let socketEvents = events.filter { $0.name == "s.sock" }
        #expect(socketEvents.map(\.mask) == [UInt32(IN_MOVED_TO)], "\(events)")
        let attributes = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: daemon.root.path).allSatisfy {
                !$0.hasPrefix(".scenesyncd-bind")
            })
    }

    /// A client whose credentials cannot be read (`SO_PEERCRED` fails, played by a test hook) may read but not
    /// write, and the daemon says why in its log.
    @Test func aClientWithoutCredentialsMayOnlyReadAndIsLogged() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        daemon.extraEnvironment["SCENESYNC_TEST_FAIL_PEERCRED"] = "1"
        try daemon.writeScene("a", "[1]")
        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.request("get", ["scene": J.string("a")]).isOK)
        let refused = try await client.request("set", ["scene": J.string("a"), "path": #"[{"value":2}]"#])
        #expect(refused.errorCode == "forbidden", "\(refused.text)")
        #expect(refused.text.contains("unidentified peer"), "\(refused.text)")
        #expect(daemon.stderrText.contains("cannot read a client's credentials"), "\(daemon.stderrText)")
    }
}
