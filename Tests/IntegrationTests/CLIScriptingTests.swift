import Foundation
import SceneSyncCore
import Testing

/// What scripts need of `scenesync`: JSON errors under `--json`, `sync`, `wait`, `watch --count`, `get --raw`, and
/// one `--version` format for both binaries.
@Suite struct CLIScriptingTests {
    func cli(_ daemon: DaemonProcess, _ arguments: String...) async throws -> CLIProcess.Result {
        try await CLIProcess.run(arguments + ["--socket", daemon.socketPath])
    }

    func errorObject(_ result: CLIProcess.Result) throws -> JSONValue {
        let line = try #require(result.stderr.split(separator: "\n").first, "no error line: \(result)")
        return try #require(try JSONParser.parse(Array(line.utf8))["error"], "not {\"error\":…}: \(result)")
    }

    @Test func underJSONErrorsAreJSONOnStderrWithTheirCode() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let missing = try await cli(daemon, "--json", "get", "nothing")
        #expect(missing.status == 1 && missing.stdout.isEmpty)
        #expect(try errorObject(missing)["code"]?.stringValue == "not_found")

        _ = try await cli(daemon, "set", "s", "[1]")
        let conflict = try await cli(daemon, "--json", "set", "s", "[2]", "--if-version", "7")
        #expect(conflict.status == 1)
        let error = try errorObject(conflict)
        #expect(error["code"]?.stringValue == "conflict")
        #expect(error["current"]?["version"]?.uint64Value == 1, "\(conflict)")

        let usage = try await cli(daemon, "--json", "set", "s", "not json")
        #expect(usage.status == 2)
        #expect(try errorObject(usage)["code"]?.stringValue == "usage")

        let noDaemon = try await CLIProcess.run(["get", "s", "--json", "--socket", daemon.root.appending("none").path])
        #expect(noDaemon.status == 3)
        #expect(try errorObject(noDaemon)["code"]?.stringValue == "no_daemon")

        // Without --json, the error stays a line of text.
        let text = try await cli(daemon, "get", "nothing")
        #expect(text.status == 1 && text.stderr.hasPrefix("scenesync: not_found: "), "\(text)")
    }

    @Test func syncPrintsTheClockAfterEveryEarlierFileChange() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        try daemon.writeScene("app", "[1]")
        let synced = try await cli(daemon, "sync")
        #expect(synced.status == 0)
        let clock = try #require(Clock(parsing: synced.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(clock.revision == 1, "\(synced)")
        let got = try await cli(daemon, "--json", "get", "app")
        #expect(try JSONParser.parse(Array(got.stdout.utf8))["version"]?.uint64Value == 1)
    }

    @Test func waitReturnsAtTheVersionOrTimesOutWithStatus4() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        let waiting = Task { try await cli(daemon, "wait", "app", "--version", "2", "--timeout", "60") }
        _ = try await cli(daemon, "set", "app", "[1]")
        _ = try await cli(daemon, "set", "app", "[1,2]")
        let reached = try await waiting.value
        #expect(reached.status == 0 && reached.stdout == "app v2\n", "\(reached)")

        let already = try await cli(daemon, "wait", "app", "--version", "1")
        #expect(already.status == 0 && already.stdout == "app v2\n", "\(already)")

        let late = try await cli(daemon, "--json", "wait", "app", "--version", "9", "--timeout", "0.2")
        #expect(late.status == 4, "\(late)")
        #expect(try errorObject(late)["code"]?.stringValue == "timed_out")
    }

    @Test func watchCountEndsAfterThatManySceneEvents() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try daemon.writeScene("a", "[1]")
        try await daemon.start()
        let watch = try CLIProcess.start(["watch", "--count", "2", "--socket", daemon.socketPath])
        try await watch.lines(untilPrefix: "-- synced")
        _ = try await cli(daemon, "set", "a", "[2]")
        try await watch.lines(until: { $0.contains(" change a ") })
        #expect(try await watch.process.exit(timeout: .seconds(60)).status == 0)
    }

    @Test func getRawPrintsTheSceneFilesBytes() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.cleanup() }
        try await daemon.start()
        // An app's own spelling: spaces and key order that the daemon's encoder would not produce.
        let file = #"[ "MyApp.Route", "{\"b\": 1, \"a\": 2}" ]"#
        try daemon.writeScene("app", file)
        let raw = try await cli(daemon, "get", "--raw", "app")
        #expect(raw.status == 0 && raw.stdout == file, "\(raw)")
        let missing = try await cli(daemon, "get", "--raw", "nothing")
        #expect(missing.status == 1 && missing.stdout.isEmpty)
    }

    @Test func bothBinariesPrintTheirVersionTheSameWay() async throws {
        let cli = try await CLIProcess.run(["--version"])
        let daemon = try await CLIProcess.run(["--version"], executable: BuiltProducts.scenesyncd)
        #expect(cli.status == 0 && daemon.status == 0)
        let cliVersion = try #require(cli.stdout.wholeMatch(of: /scenesync ([0-9]+\.[0-9]+\.[0-9]+\S*)\n/), "\(cli)")
        let daemonVersion = try #require(
            daemon.stdout.wholeMatch(of: /scenesyncd ([0-9]+\.[0-9]+\.[0-9]+\S*)\n/), "\(daemon)")
        #expect(cliVersion.1 == daemonVersion.1)
    }
}
