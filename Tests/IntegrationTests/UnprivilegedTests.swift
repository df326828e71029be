import Foundation
import Testing

/// What only a user without root's privileges can meet, which is how the daemon runs for a desktop user: a file or
/// directory it may not read. CI runs as root, which may read anything, so these run the daemon as `nobody`
/// through `setpriv`; the unit tests that check the same errors in-process can only run without root.
///
/// `nobody` runs a copy of the daemon (``ReachableExecutables``), and the tests' files lie in a temp directory it
/// may enter: the clone, and so the build folder, may be in a directory only its owner can enter.
@Suite struct UnprivilegedTests {
    static let nobody = 65534

    /// A temp directory below parents that `nobody` may traverse.
    static func directory() throws -> TemporaryDirectory {
        try TemporaryDirectory("upr", in: try ReachableExecutables.base())
    }

    /// Runs `scenesyncd arguments…` as nobody, in `directory`, and returns its status and output.
    static func runAsNobody(_ arguments: [String], in directory: TemporaryDirectory) async throws -> HostCommand.Result
    {
        try TestEnvironment.requireRoot("running the daemon as another user needs root")
        let setpriv = try #require(HostCommand.find("setpriv"), "setpriv not found (util-linux)")
        // mkdtemp's 0700 would refuse nobody the directory before the file the test is about.
        try #require(chmod(directory.path, 0o755) == 0)
        let executables = try ReachableExecutables([BuiltProducts.scenesyncd])
        defer { executables.remove() }
        return try await HostCommand.run(
            setpriv,
            [
                "--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups", "--", "/usr/bin/env",
                "HOME=\(directory.path)",
                executables.path("scenesyncd"),
            ] + arguments, in: directory.url)
    }

    @Test func anUnreadableConfigurationFileIsAOneLineError() async throws {
        let directory = try Self.directory()
        defer { directory.remove() }
        let file = directory.appending("scenesyncd.yaml").path
        try "log:\n  level: info\n".write(toFile: file, atomically: true, encoding: .utf8)
        try #require(chmod(file, 0o600) == 0)
        let result = try await Self.runAsNobody(["--check-config", "--config", file], in: directory)
        #expect(result.status == 1, "\(result.output)")
        let last = result.output.trimmingCharacters(in: .newlines).split(separator: "\n").last ?? ""
        #expect(
            last.hasSuffix("\(file): cannot read the configuration file (Permission denied)"), "\(result.output)")
    }

    @Test func anUnreadableScenesDirectoryIsAOneLineErrorThatTouchesNothing() async throws {
        let directory = try Self.directory()
        defer { directory.remove() }
        let scenes = directory.appending("scenes").path
        let state = directory.appending("state").path
        try FileManager.default.createDirectory(atPath: scenes, withIntermediateDirectories: false)
        try #require(chmod(scenes, 0o700) == 0)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        try #require(chown(state, uid_t(Self.nobody), gid_t(Self.nobody)) == 0)
        let socket = state + "/s.sock"
        let result = try await Self.runAsNobody(
            ["--scenes-dir", scenes, "--state-dir", state, "--socket", socket], in: directory)
        #expect(result.status == 1, "\(result.output)")
        let lines = result.output.trimmingCharacters(in: .newlines).split(separator: "\n")
        #expect(lines.last?.contains(scenes) == true, "\(result.output)")
        #expect(lines.last?.contains("Permission denied") == true, "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: socket), "a refused start left its socket")
    }

    /// Scene-file reads ask the kernel to leave access times alone (`O_NOATIME`), which only a file's owner (or
    /// `CAP_FOWNER`) may ask: a daemon that reads another user's files is refused once and reads them as everyone does.
    @Test func anotherUsersSceneFilesAreReadAllTheSame() async throws {
        try TestEnvironment.requireRoot("starting the daemon without CAP_FOWNER needs root")
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        daemon.launcher = ["/usr/bin/setpriv", "--bounding-set", "-fowner", "--"]
        for (id, path) in [("theirs", "[1]"), ("also-theirs", "[2]")] {
            try Data(path.utf8).write(to: daemon.sceneFile(id))
            try #require(chown(daemon.sceneFile(id).path, uid_t(Self.nobody), gid_t(Self.nobody)) == 0)
        }
        try await daemon.start()
        let client = try await daemon.connect()
        #expect(try await client.scene("theirs")["version"]?.uint64Value == 1)
        #expect(try await client.scene("also-theirs")["version"]?.uint64Value == 1)
        // A write after the start, read through the watcher.
        try Data("[3]".utf8).write(to: daemon.sceneFile("theirs"))
        _ = try await client.sync()
        #expect(try await client.scene("theirs")["version"]?.uint64Value == 2)
    }
}
