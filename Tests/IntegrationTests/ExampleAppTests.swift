import Foundation
import Testing

/// The example app (Examples/RecipeWindows), two copies of it driven as a user would: windows reopened at launch,
/// each copy following the other's changes, and the background phase on exit.
@Suite struct ExampleAppTests {
    /// One running copy of the app, with a pipe to type its commands into.
    final class App: Sendable {
        let process: CLIProcess
        let input: Int32

        init(_ daemon: DaemonProcess) throws {
            let pipe = try makePipe()
            defer { close(pipe.read) }
            input = pipe.write
            process = try CLIProcess.start(
                [daemon.socketPath], stdin: pipe.read, executable: BuiltProducts.recipeWindows)
        }

        deinit { close(input) }

        func type(_ command: String) throws {
            let bytes = Array((command + "\n").utf8)
            guard write(input, bytes, bytes.count) == bytes.count else {
                throw CLIProcess.CLIError.endOfOutput(transcript: process.transcript, stderr: process.stderrText)
            }
        }

        @discardableResult
        func lines(untilPrefix prefix: String) async throws -> [String] {
            try await process.lines(untilPrefix: prefix, timeout: .seconds(60))
        }
    }

    @Test func twoCopiesFollowEachOtherAndTheirWindowsComeBack() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()

        let first = try App(daemon)
        let opened = try await first.lines(untilPrefix: "window 1 ")
        #expect(opened.last?.hasSuffix(": (root)") == true, "\(opened)")
        try first.type("push 1 recipe 42")
        try await first.lines(untilPrefix: "window 1: recipe 42")

        // A second copy reopens the first one's window and follows it.
        let second = try App(daemon)
        let reopened = try await second.lines(untilPrefix: "window 1 ")
        #expect(reopened.last?.hasSuffix(": recipe 42") == true, "\(reopened)")
        try second.type("push 1 settings")
        try await second.lines(untilPrefix: "window 1: recipe 42 > settings")
        try await first.lines(untilPrefix: "changed 1: recipe 42 > settings")

        // Quitting reports the background phase: the daemon snapshots the window.
        try first.type("quit")
        let saved = try await first.lines(untilPrefix: "saved 1")
        #expect(saved.last?.contains("at revision") == true)
        #expect(try await first.process.process.exit(timeout: .seconds(60)).status == 0)
        try second.type("quit")
        try await second.lines(untilPrefix: "saved 1")
        #expect(try await second.process.process.exit(timeout: .seconds(60)).status == 0)

        // The next launch, after a restart of the daemon, reopens the window where it was.
        #expect(try await daemon.stop() == 0)
        try await daemon.start()
        let third = try App(daemon)
        let restored = try await third.lines(untilPrefix: "window 1 ")
        #expect(restored.last?.hasSuffix(": recipe 42 > settings") == true, "\(restored)")
        try third.type("quit")
        #expect(try await third.process.process.exit(timeout: .seconds(60)).status == 0)
    }
}
