import Foundation
import SceneSyncCore
import Testing

/// The README runs as written: its quick start from a clone, in an ordinary user's session with the built binaries,
/// and the Swift code of "Integrating your app", which the `readme-integration` example holds byte for byte.
@Suite struct ReadmeTests {
    // MARK: - Quick start

    @Test func theQuickStartRunsAsWritten() async throws {
        let quickStart = try ReadmeQuickStart(Readme.load())
        let session = try UserSession(executables: [BuiltProducts.scenesyncd, BuiltProducts.scenesync])
        defer { session.cleanup() }
        try await session.startDaemon()

        let bash = try #require(HostCommand.find("bash"), "bash not found")
        let input = try makePipe()
        let output = try makePipe()
        let errors = session.root.path + "/commands.err"
        let shell: ChildProcess
        do {
            defer {
                close(input.read)
                close(output.write)
            }
            // -e: the first command that fails stops the script, and its status is the shell's.
            shell = try session.spawn(
                bash, ["-e"], stdin: .descriptor(input.read), stdout: .descriptor(output.write),
                stderr: .file(errors), processGroup: true)
        }
        let reader = LineReader(fd: output.read)
        // `scenesync watch &` outlives the shell; its process group ends with the test. Process IDs are handed out
        // in turn, so the group's ID is not someone else's this soon even when the group has ended by itself.
        var inputOpen = true
        defer {
            shell.signalGroup(SIGKILL)
            if inputOpen { close(input.write) }
            close(output.read)
        }
        var transcript: [String] = []
        func failure(_ what: String) -> Failure {
            Failure(
                "\(what)\ncommands:\n\(quickStart.script)\noutput:\n\(transcript.joined(separator: "\n"))\n"
                    + "stderr:\n\((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")\n"
                    + "scenesyncd:\n\(session.daemonText)")
        }
        func nextLine() async throws -> String {
            do {
                guard let line = try await reader.readLine(until: .now + .seconds(60), "the quick start's output")
                else { throw failure("the output ended") }
                transcript.append(line)
                return line
            } catch is WaitTimeout {
                throw failure("no more output in time")
            }
        }

        // The output of every command, `watch`'s lines among the others'. `cat` prints the file without a newline,
        // so the next line may follow the file's content on the same line.
        var watchLines: [String] = []
        var fileShown = false
        func take(_ line: String) {
            var line = line
            if !fileShown, let range = line.range(of: quickStart.fileAfterPush) {
                fileShown = true
                line.removeSubrange(range)
            }
            if ReadmeQuickStart.isWatchLine(line) { watchLines.append(line) }
        }
        for part in quickStart.parts {
            try write(part.text, to: input.write)
            guard part.startsWatch else { continue }
            while watchLines.isEmpty { take(try await nextLine()) }
        }
        close(input.write)
        inputOpen = false
        let status = try await shell.exit(timeout: .seconds(120))
        guard status == .exited(0) else { throw failure("the commands ended with \(status)") }
        while watchLines.count < quickStart.watchOutput.count { take(try await nextLine()) }

        #expect(watchLines.count == quickStart.watchOutput.count)
        for (line, expected) in zip(watchLines, quickStart.watchOutput) {
            #expect(ReadmeQuickStart.matches(line, expected), "watch printed \(line)\nthe README says \(expected)")
        }
        #expect(fileShown, "`cat` did not show \(quickStart.fileAfterPush)\n\(transcript.joined(separator: "\n"))")
        #expect(try await session.stopDaemon() == 0)
    }

    /// The matching of `watch`'s lines against the README's, `…` included, can fail.
    @Test func watchLinesMatchOnlyWhatTheReadmeShows() {
        let expected = "-- synced at r0 (epoch …)"
        #expect(ReadmeQuickStart.matches("-- synced at r0 (epoch 5f3a9c)", expected))
        #expect(!ReadmeQuickStart.matches("-- synced at r0 (epoch )", expected))
        #expect(!ReadmeQuickStart.matches("-- synced at r1 (epoch 5f3a9c)", expected))
        #expect(ReadmeQuickStart.matches("r1 change a v1 [] (file)", "r1 change a v1 [] (file)"))
        #expect(!ReadmeQuickStart.matches("r1 change a v1 [] (file) ", "r1 change a v1 [] (file)"))
        #expect(ReadmeQuickStart.isWatchLine("r12 change a v1 [] (file)"))
        #expect(!ReadmeQuickStart.isWatchLine("recipe v1 (r2)"))
    }

    // MARK: - Integrating your app

    /// The README's swift blocks are the example's marked regions, byte for byte once the region's indentation is
    /// taken off: the code the next tests run is the README's.
    @Test func theSwiftBlocksAreTheExamplesCode() throws {
        let blocks = try ReadmeIntegration.blocks(Readme.load())
        for (block, region) in zip(blocks, ReadmeIntegration.regions) {
            let code = try ReadmeIntegration.markedRegion(region)
            #expect(
                code == block,
                "the README's \(region.name) block differs from \(region.file)'s marked region; copy it there")
        }
    }

    @Test func theScenePathBlockRuns() async throws {
        let session = try UserSession(
            executables: [BuiltProducts.scenesyncd, BuiltProducts.scenesync, BuiltProducts.readmeIntegration])
        defer { session.cleanup() }
        try await session.startDaemon()
        let report = try await ReadmeIntegration.run(in: session)
        let client = try await SocketClient.connect(path: session.socketPath)
        let scene = try await client.scene(try #require(report["scene"]?.stringValue))
        #expect(scene["path"] == (try ReadmeIntegration.wirePath(report)), "\(scene)")
        #expect(try await session.stopDaemon() == 0)
    }

    /// `SceneFile(scene:)`, given no directory, writes where the session's daemon watches: the daemon reports the
    /// file's routes as the scene.
    @Test func theSceneFileBlockRuns() async throws {
        let session = try UserSession(
            executables: [BuiltProducts.scenesyncd, BuiltProducts.scenesync, BuiltProducts.readmeIntegration])
        defer { session.cleanup() }
        try await session.startDaemon()
        let report = try await ReadmeIntegration.run(in: session, ["scene-file"])
        let client = try await SocketClient.connect(path: session.socketPath)
        let directory = try await client.ok("hello")["scenes_dir"]?.stringValue
        #expect(report["directory"]?.stringValue == directory)
        #expect(directory == session.scenesDirectory)
        try await client.sync()
        let scene = try await client.scene(try #require(report["scene"]?.stringValue))
        #expect(scene["path"] == (try ReadmeIntegration.wirePath(report)), "\(scene)")
        #expect(try await session.stopDaemon() == 0)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private func write(_ text: String, to descriptor: Int32) throws {
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Failure("writing to the shell: \(String(cString: strerror(errno)))") }
            written += count
        }
    }
}
