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
        #expect(await daemon.logs("cannot read a client's credentials"), "\(daemon.stderrText)")
    }

    /// A socket-activation environment that describes no descriptor of the daemon (`LISTEN_FDS=1`, fd 3 not open)
    /// is reported as what it is, before any other check, and the state directory is left uncreated.
    @Test func aBrokenSocketActivationIsReportedFirstAndTouchesNothing() async throws {
        let scratch = try TemporaryDirectory("sssa")
        defer { scratch.remove() }
        let output = scratch.appending("out").path
        let state = scratch.appending("state").path
        let environment = ChildProcess.environment(
            removing: [
                "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "JOURNAL_STREAM",
            ])
        // The shell's pid is the daemon's after exec, so LISTEN_PID names the daemon.
        let process = try ChildProcess(
            "/bin/sh",
            [
                "-c", #"export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" "$@" 3<&-"#, BuiltProducts.scenesyncd.path,
                "--scenes-dir", scratch.appending("scenes").path, "--state-dir", state,
                "--socket", "/nonexistent-scenesync-dir/s.sock",
            ],
            environment: environment, stdout: .file(output))
        let termination = try await process.exit(timeout: .seconds(30))
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(termination.status == 1, "\(text)")
        #expect(text.contains("socket activation:"), "\(text)")
        #expect(!FileManager.default.fileExists(atPath: state))
    }
}
