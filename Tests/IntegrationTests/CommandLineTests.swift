import Foundation
import SceneSyncCore
import Testing

/// `scenesyncd`'s command line (§8): `--version`, `--check-config`, and the starts it must refuse with one line, exit
/// status 1 and nothing touched.
@Suite struct CommandLineTests {
    /// Paths for a one-shot run that no daemon uses.
    struct Scratch {
        let directory: TemporaryDirectory
        var config: URL { directory.appending("scenesyncd.yaml") }
        var state: URL { directory.appending("state") }
        var scenes: URL { directory.appending("scenes") }
        var socket: String { directory.appending("s.sock").path }

        init(config text: String = "log: {level: info}\n") throws {
            directory = try TemporaryDirectory("sscl")
            try text.write(to: config, atomically: true, encoding: .utf8)
        }

        func arguments(state: String? = nil, scenes: String? = nil, socket: String? = nil) -> [String] {
            [
                "--config", config.path, "--state-dir", state ?? self.state.path, "--scenes-dir",
                scenes ?? self.scenes.path, "--socket", socket ?? self.socket,
            ]
        }

        /// Whether the run created any of the paths it was given (the config file aside).
        var createdSomething: Bool {
            [state.path, scenes.path, socket].contains { FileManager.default.fileExists(atPath: $0) }
        }
    }

    /// A refusal is one line naming the problem.
    static func expectOneLine(_ output: String, mentioning words: [String], _ comment: String = "") {
        let lines = output.split(separator: "\n")
        #expect(lines.count == 1, "\(comment): \(output)")
        #expect(output.hasPrefix("scenesyncd: "), "\(comment): \(output)")
        for word in words { #expect(output.contains(word), "\(comment): \(output) does not mention \(word)") }
    }

    @Test func versionMatchesHello() async throws {
        let (status, output) = try await runScenesyncd(["--version"])
        #expect(status == 0)
        let match = try #require(output.wholeMatch(of: /scenesyncd ([0-9]+\.[0-9]+\.[0-9]+\S*)\n/), "\(output)")
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        #expect(try await daemon.connect().ok("hello")["version"]?.stringValue == String(match.1))
    }

    @Test func checkConfigAcceptsValidFiles() async throws {
        let custom = try Scratch(
            config: """
                scenes: {format: codable, restore_missing: false, max_file_bytes: 2048, max_depth: 8}
                snapshots: {keep: 1}
                history: {max_revisions: 0}
                socket: {mode: "0600", max_clients: 3, max_line_bytes: 512, subscriber_queue: 2, \
                stall_timeout_s: 0.5, heartbeat_s: 2}
                access: {write_uids: [1000], write_gids: [100, 101]}
                log: {level: warning}

                """)
        defer { custom.directory.remove() }
        let shipped = BuiltProducts.packageRoot.appendingPathComponent("config/scenesyncd.yaml").path
        for config in [custom.config.path, shipped] {
            var arguments = custom.arguments() + ["--check-config"]
            arguments[1] = config
            let (status, output) = try await runScenesyncd(arguments)
            #expect(status == 0, "\(config): \(output)")
            #expect(output.contains("valid"), "\(output)")
        }
        #expect(!custom.createdSomething, "--check-config created directories")
    }

    @Test(arguments: [
        ("scenes: {max_file_byts: 5}\n", "max_file_byts"),
        ("socket: {mode: 0660}\n", "mode"),
        ("snapshots: {keep: 0}\n", "keep"),
        ("scenes: [\n", "scenesyncd.yaml"),
        ("bogus: 1\n", "bogus"),
        ("log: {level: loud}\n", "level"),
    ])
    func checkConfigRefusesInvalidFiles(config: String, mentioned: String) async throws {
        let scratch = try Scratch(config: config)
        defer { scratch.directory.remove() }
        let (status, output) = try await runScenesyncd(scratch.arguments() + ["--check-config"])
        #expect(status == 1)
        Self.expectOneLine(output, mentioning: [mentioned], config)

        // Starting with it is refused the same way, before anything is created.
        let (startStatus, startOutput) = try await runScenesyncd(scratch.arguments())
        #expect(startStatus == 1)
        Self.expectOneLine(startOutput, mentioning: [mentioned], config)
        #expect(!scratch.createdSomething)
    }

    @Test func badFlagsAreRefused() async throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let missing = scratch.directory.appending("missing.yaml").path
        var arguments = scratch.arguments()
        arguments[1] = missing
        let (status, output) = try await runScenesyncd(arguments + ["--check-config"])
        #expect(status == 1)
        Self.expectOneLine(output, mentioning: [missing], "missing --config")

        let (levelStatus, levelOutput) = try await runScenesyncd(scratch.arguments() + ["--log-level", "loud"])
        #expect(levelStatus == 1)
        Self.expectOneLine(levelOutput, mentioning: ["--log-level"], "bad --log-level")
        #expect(!scratch.createdSomething)
    }

    // MARK: - Refused starts

    @Test func secondDaemonOnTheSameStateDirectoryIsRefused() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let client = try await daemon.connect()
        try await client.ok("set", ["scene": J.string("s"), "path": "[]"])
        try await client.ok("snapshot")
        // The snapshot's index of unchanged scene files is written after the answer (a cache, which the answer does
        // not wait for): the listing below is taken once it is there.
        let index = daemon.state.appendingPathComponent("scene-files.index").path
        #expect(await eventually { FileManager.default.fileExists(atPath: index) })
        let lockPath = daemon.state.appendingPathComponent("lock")
        let listing = try FileManager.default.contentsOfDirectory(atPath: daemon.state.path).sorted()
        let lock = try Data(contentsOf: lockPath)
        let snapshots = daemon.snapshotFiles()

        let (status, output) = try await runScenesyncd(daemon.arguments)
        #expect(status == 1)
        Self.expectOneLine(
            output, mentioning: ["already running", daemon.state.path, "\(daemon.pid)"], "second daemon")

        #expect(try FileManager.default.contentsOfDirectory(atPath: daemon.state.path).sorted() == listing)
        #expect(try Data(contentsOf: lockPath) == lock)
        #expect(daemon.snapshotFiles() == snapshots)
        // The first keeps serving, on the same socket file.
        #expect(try await client.ok("push", ["scene": J.string("s"), "elements": #"[{"value":1}]"#]).isOK)
        #expect(try await daemon.connect().ok("hello")["pid"]?.int64Value == Int64(daemon.pid))
        #expect(daemon.process?.isRunning == true)
    }

    @Test func liveSocketIsNotStolen() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let scratch = try Scratch()
        defer { scratch.directory.remove() }

        let (status, output) = try await runScenesyncd(scratch.arguments(socket: daemon.socketPath))
        #expect(status == 1)
        Self.expectOneLine(output, mentioning: [daemon.socketPath], "live socket")
        #expect(try await daemon.connect().ok("hello")["pid"]?.int64Value == Int64(daemon.pid))
    }

    @Test func socketPathThatIsARegularFileIsRefused() async throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let file = scratch.directory.appending("not-a-socket")
        try Data("keep me".utf8).write(to: file)

        let (status, output) = try await runScenesyncd(scratch.arguments(socket: file.path))
        #expect(status == 1)
        Self.expectOneLine(output, mentioning: [file.path, "not a socket"], "regular file")
        #expect(try Data(contentsOf: file) == Data("keep me".utf8))
        #expect(!scratch.createdSomething)
    }

    @Test func unusableDirectoriesAreRefused() async throws {
        let scratch = try Scratch()
        defer { scratch.directory.remove() }
        let file = scratch.directory.appending("file")
        try Data().write(to: file)
        let beneath = file.appendingPathComponent("sub").path
        for (arguments, name) in [
            (scratch.arguments(socket: file.appendingPathComponent("s.sock").path), "socket"),
            (scratch.arguments(scenes: beneath), "scenes"),
            (scratch.arguments(scenes: file.path), "scenes"),
            (scratch.arguments(state: beneath), "state"),
            (scratch.arguments(state: file.path), "state"),
        ] {
            let (status, output) = try await runScenesyncd(arguments)
            #expect(status == 1, "\(arguments)")
            Self.expectOneLine(output, mentioning: [name, file.path], "\(arguments)")
            #expect(!scratch.createdSomething, "\(arguments): a refused start created something")
        }
    }
}
