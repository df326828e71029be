import Foundation
import SceneSyncCore
import SceneSyncTestKit
import Testing

/// The real `scenesync` against a real `scenesyncd`: every command, every exit status, `--json` output read by `jq`,
/// and `watch` across daemon restarts.
@Suite struct CLITests {
    /// Runs `body` with a started daemon, and always cleans up.
    func withDaemon(config: String? = nil, _ body: (DaemonProcess) async throws -> Void) async throws {
        let daemon = try DaemonProcess(config: config)
        defer { daemon.cleanup() }
        try await daemon.start()
        try await body(daemon)
    }

    /// `scenesync arguments… --socket <daemon's socket>`.
    func cli(_ daemon: DaemonProcess, _ arguments: String..., stdin: String? = nil) async throws -> CLIProcess.Result {
        try await CLIProcess.run(arguments + ["--socket", daemon.socketPath], stdin: stdin)
    }

    /// Like ``cli(_:_:stdin:)`` but requires exit status 0.
    @discardableResult
    func ok(_ daemon: DaemonProcess, _ arguments: String..., stdin: String? = nil) async throws -> CLIProcess.Result {
        let result = try await CLIProcess.run(arguments + ["--socket", daemon.socketPath], stdin: stdin)
        #expect(result.status == 0, "scenesync \(arguments.joined(separator: " ")): \(result)")
        return result
    }

    /// Waits until the daemon has merged every file written so far.
    func sync(_ daemon: DaemonProcess) async throws {
        let response = try await daemon.connect().request("sync")
        #expect(response.isOK)
    }

    func json(_ text: String) throws -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    // MARK: - Commands

    @Test func statusListAndGet() async throws {
        try await withDaemon { daemon in
            let status = try await ok(daemon, "status")
            #expect(status.stdout.contains("scenesyncd"))
            #expect(status.lines.contains { $0.hasPrefix("pid") && $0.hasSuffix(" \(daemon.pid)") })
            #expect(status.lines.contains { $0.hasPrefix("scenes") && $0.hasSuffix(" 0") })

            #expect(try await ok(daemon, "list").lines == ["SCENE  VERSION  MODIFIED  DEPTH"])
            try daemon.writeScene("recipes", #"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#)
            try daemon.writeScene("main", "[1,2,3]")
            try await sync(daemon)
            #expect(
                try await ok(daemon, "list").lines == [
                    "SCENE    VERSION  MODIFIED  DEPTH",
                    "main           1        r2      3",
                    "recipes        1        r1      2",
                ])
            let get = try await ok(daemon, "get", "recipes")
            #expect(get.lines.contains("format    codable"))
            #expect(get.lines.contains("depth     2"))
            #expect(get.lines.suffix(2) == [#"  0  MyApp.Recipe {"applePie":{}}"#, "  1  Swift.Int 42"])
        }
    }

    @Test func setInEitherFormatOrAsAWirePath() async throws {
        try await withDaemon { daemon in
            let codable = #"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#
            #expect(try await ok(daemon, "set", "recipes", codable).stdout == "recipes v1 (r1)\n")
            #expect(daemon.readScene("recipes") == codable)
            let fetched = try json(try await ok(daemon, "get", "recipes", "--json").stdout)
            #expect(fetched["format"]?.stringValue == "codable")
            #expect(
                fetched["path"]
                    == (try json(#"[{"type":"MyApp.Recipe","value":{"applePie":{}}},{"type":"Swift.Int","value":42}]"#))
            )

            try await ok(daemon, "set", "main", #"[{"applePie":{}},{"chocolateCake":{}}]"#)
            #expect(daemon.readScene("main") == #"[{"applePie":{}},{"chocolateCake":{}}]"#)
            #expect(try json(try await ok(daemon, "get", "main", "--json").stdout)["format"]?.stringValue == "array")

            try await ok(daemon, "set", "piped", "-", stdin: "[1, 2, 3]\n")
            #expect(
                try json(try await ok(daemon, "get", "piped", "--json").stdout)["path"]
                    == (try json(#"[{"value":1},{"value":2},{"value":3}]"#)))

            try await ok(daemon, "set", "wired", "--wire", #"[{"type":"MyApp.Recipe","value":{"applePie":{}}}]"#)
            #expect(daemon.readScene("wired") == #"["MyApp.Recipe","{\"applePie\":{}}"]"#)

            try await ok(daemon, "set", "main", "[]")
            #expect(daemon.readScene("main") == "[]")
        }
    }

    @Test func pushPopDeleteAndHistory() async throws {
        try await withDaemon { daemon in
            #expect(try await ok(daemon, "push", "main", "1", #""two""#, #"{"three":3}"#).stdout == "main v1 (r1)\n")
            #expect(daemon.readScene("main") == #"[1,"two",{"three":3}]"#)
            try await ok(daemon, "push", "recipes", #"{"applePie":{}}"#, "--type", "MyApp.Recipe")
            try await ok(daemon, "push", "recipes", "42", "--type", "Swift.Int")
            #expect(daemon.readScene("recipes") == #"["Swift.Int","42","MyApp.Recipe","{\"applePie\":{}}"]"#)

            #expect(try await ok(daemon, "pop", "main").stdout == "main v2 (r4)\n")
            #expect(daemon.readScene("main") == #"[1,"two"]"#)
            try await ok(daemon, "pop", "recipes", "--count", "2")
            #expect(daemon.readScene("recipes") == "[]")
            try await ok(daemon, "push", "main", "3")
            try await ok(daemon, "pop", "main", "--root")
            #expect(daemon.readScene("main") == "[]")

            let history = try await ok(daemon, "history", "main")
            #expect(history.lines.first == "REVISION  KIND  VERSION  ORIGIN            PATH")
            #expect(history.lines.count == 5)
            #expect(history.lines[1].hasPrefix("      r7  set         4  client scenesync  []"))
            #expect(history.lines.last?.contains(#"[1, "two", {"three":3}]"#) == true)
            #expect(try await ok(daemon, "history", "main", "--limit", "1").lines.count == 2)

            #expect(try await ok(daemon, "delete", "main").stdout == "deleted main (r8)\n")
            #expect(daemon.readScene("main") == nil)
            #expect(try await ok(daemon, "list").stdout.contains("main") == false)
        }
    }

    @Test func optionsGoBeforeOrAfterTheCommand() async throws {
        try await withDaemon { daemon in
            try await ok(daemon, "push", "main", "1")
            for arguments in [
                ["--socket", daemon.socketPath, "--json", "list"], ["list", "--socket", daemon.socketPath, "--json"],
                ["--json", "list", "--socket", daemon.socketPath], ["--socket", daemon.socketPath, "list", "--json"],
            ] {
                let result = try await CLIProcess.run(arguments)
                #expect(result.status == 0, "\(arguments): \(result)")
                #expect(try json(result.stdout)["scenes"]?.arrayValue?.count == 1)
            }
            let viaEnvironment = try await CLIProcess.run(
                ["list"], environment: ["SCENESYNC_SOCKET": daemon.socketPath])
            #expect(viaEnvironment.status == 0 && viaEnvironment.stdout.contains("main"))
        }
    }

    @Test func snapshotPhaseAndReload() async throws {
        try await withDaemon(config: "log:\n  level: debug\n") { daemon in
            try await ok(daemon, "push", "main", "1")
            let snapshot = try await ok(daemon, "snapshot")
            #expect(snapshot.stdout.hasPrefix("wrote snapshot r1: 1 scene, "))
            #expect(daemon.snapshotFiles().count == 1)

            #expect(try await ok(daemon, "phase", "main", "active").stdout == "main active\n")
            let background = try await ok(daemon, "phase", "main", "background")
            #expect(background.lines.first == "main background")
            #expect(background.lines.last?.hasPrefix("wrote snapshot r1") == true)

            #expect(try await ok(daemon, "reload").stdout == "reloaded the configuration\n")
            try "log: [unclosed\n".write(to: daemon.configFile, atomically: true, encoding: .utf8)
            let failed = try await cli(daemon, "reload")
            #expect(failed.status == 1, "\(failed)")
            #expect(failed.stderr.hasPrefix("scenesync: invalid_config: "))
            try "log:\n  level: info\n".write(to: daemon.configFile, atomically: true, encoding: .utf8)
            try await ok(daemon, "reload")
        }
    }

    @Test func helpForEveryCommandAndCompletion() async throws {
        for command in [
            "status", "list", "get", "set", "push", "pop", "delete", "watch", "history", "snapshot", "phase", "reload",
        ] {
            let result = try await CLIProcess.run([command, "--help"])
            #expect(result.status == 0, "\(command): \(result)")
            #expect(result.stdout.contains("USAGE: scenesync \(command)"))
        }
        let root = try await CLIProcess.run(["--help"])
        #expect(root.status == 0 && root.stdout.contains("SUBCOMMANDS"))
        let completion = try await CLIProcess.run(["--generate-completion-script", "bash"])
        #expect(completion.status == 0 && completion.stdout.contains("scenesync"))
    }

    // MARK: - Exit statuses

    @Test func daemonErrorsExitWithStatus1() async throws {
        try await withDaemon { daemon in
            let missing = try await cli(daemon, "get", "missing")
            #expect(missing.status == 1)
            #expect(missing.stderr.hasPrefix("scenesync: not_found: "))
            #expect(missing.stdout.isEmpty)

            try await ok(daemon, "push", "main", "1")
            let tooFar = try await cli(daemon, "pop", "main", "--count", "5")
            #expect(tooFar.status == 1 && tooFar.stderr.hasPrefix("scenesync: out_of_range: "))
            let conflict = try await cli(daemon, "set", "main", "[2]", "--if-version", "7")
            #expect(conflict.status == 1 && conflict.stderr.hasPrefix("scenesync: conflict: "))
            let invalid = try await cli(daemon, "get", "../etc")
            #expect(invalid.status == 1 && invalid.stderr.hasPrefix("scenesync: invalid_scene: "))
            let mixed = try await cli(daemon, "push", "main", "2", "--type", "Swift.Int")
            #expect(mixed.status == 1 && mixed.stderr.hasPrefix("scenesync: bad_request: "))
            let deleteMissing = try await cli(daemon, "delete", "missing")
            #expect(deleteMissing.status == 1 && deleteMissing.stderr.hasPrefix("scenesync: not_found: "))
        }
    }

    @Test func usageErrorsExitWithStatus2() async throws {
        try await withDaemon { daemon in
            for arguments in [
                ["push", "main", "{not json"], ["push", "main"], ["set", "main", #"{"a":1}"#], ["set", "main", "[1,"],
                ["set", "main", "42"], ["set", "main", "--wire", "[1]"], ["set", "main"], ["get"], ["frobnicate"],
                ["pop", "main", "--count", "2", "--root"], ["pop", "main", "--count", "-1"],
                ["phase", "main", "asleep"],
                ["watch", "--since", "nonsense"], ["history", "main", "--limit", "x"], ["list", "--bogus"], [],
            ] {
                let result = try await CLIProcess.run(arguments + ["--socket", daemon.socketPath])
                #expect(result.status == 2, "\(arguments): \(result)")
                #expect(!result.stderr.isEmpty && result.stdout.isEmpty, "\(arguments): \(result)")
            }
            let stdinNotArray = try await cli(daemon, "set", "main", "-", stdin: "{}")
            #expect(stdinNotArray.status == 2 && stdinNotArray.stderr.contains("not a JSON array"))
            // Nothing reached the daemon.
            #expect(try await ok(daemon, "list").lines.count == 1)
        }
    }

    @Test func noDaemonExitsWithStatus3() async throws {
        let scratch = try TemporaryDirectory("nod")
        defer { scratch.remove() }
        let nothing = scratch.appending("none.sock").path
        // A socket file nobody listens on (a daemon that was killed) is no daemon either.
        let stale = scratch.appending("stale.sock").path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = UnixSocketAddress.with(stale) { bind(fd, $0, $1) }
        close(fd)
        #expect(bound == 0)
        for path in [nothing, stale] {
            for arguments in [["status"], ["list"], ["get", "main"], ["push", "main", "1"], ["reload"], ["watch"]] {
                let result = try await CLIProcess.run(arguments + ["--socket", path])
                #expect(result.status == 3, "\(arguments) at \(path): \(result)")
                #expect(result.stderr.hasPrefix("scenesync: no daemon at \(path)"), "\(result)")
            }
        }
    }

    // MARK: - JSON output

    @Test func jsonOutputIsReadByJQ() async throws {
        try #require(JQ.path != nil, "jq is not installed (scripts/install-deps.sh test installs it)")
        try await withDaemon { daemon in
            let commands: [([String], String)] = [
                (["push", "main", "1", "2"], ".version == 1"),
                (["set", "recipes", #"["Swift.Int","42"]"#], ".scene == \"recipes\""),
                (["pop", "main"], ".version == 2"),
                (["list"], ".scenes | length == 2"),
                (["get", "recipes"], ".path[0].type == \"Swift.Int\""),
                (["history", "main"], ".records | length == 2"),
                (["status"], ".server == \"scenesyncd\" and (.scenes == 2)"),
                (["snapshot"], ".scenes == 2"),
                (["phase", "main", "background"], ".snapshot.revision == 3"),
                (["reload"], ".ok == true"),
                (["delete", "recipes"], ".revision == 4"),
            ]
            for (arguments, filter) in commands {
                let result = try await CLIProcess.run(arguments + ["--json", "--socket", daemon.socketPath])
                #expect(result.status == 0, "\(arguments): \(result)")
                #expect(result.lines.count == 1, "\(arguments): one object per line: \(result)")
                let checked = try await JQ.run(filter, on: result.stdout)
                #expect(checked.status == 0, "\(arguments) | jq '\(filter)': \(checked.output) from \(result.stdout)")
            }
        }
    }

    // MARK: - watch

    @Test func watchPrintsEveryEventReadably() async throws {
        try await withDaemon { daemon in
            try await ok(daemon, "push", "main", "1")
            let watch = try CLIProcess.start(["watch", "--socket", daemon.socketPath])
            defer { watch.cleanup() }
            #expect(try await watch.nextLine() == "state main v1 [1] (modified r1)")
            #expect(try await watch.nextLine().hasPrefix("-- synced at r1 (epoch "))

            try await ok(daemon, "push", "main", "2", "3")
            #expect(try await watch.nextLine() == "r2 change main v2 [1, 2, 3] (client scenesync)")
            try daemon.writeScene("recipes", #"["MyApp.Recipe","{\"applePie\":{}}"]"#)
            #expect(try await watch.nextLine() == #"r3 change recipes v1 [MyApp.Recipe {"applePie":{}}] (file)"#)
            try await ok(daemon, "delete", "main")
            #expect(try await watch.nextLine() == "r4 delete main v3 (client scenesync)")
            try await ok(daemon, "phase", "recipes", "active")
            #expect(try await watch.nextLine() == "phase recipes active")
            try await ok(daemon, "snapshot")
            #expect(try await watch.nextLine().hasPrefix("snapshot r4 (request) /"))
            try daemon.writeScene("broken", "{not json")
            #expect(try await watch.nextLine().hasPrefix("warning invalid_file broken: "))

            watch.signal(SIGINT)
            #expect(try await watch.waitForExit() == 0)
        }
    }

    /// `scenesync watch | head -1`: once the reader is gone, the next event ends `watch` the way Unix tools end.
    @Test func watchEndsWhenItsReaderGoesAway() async throws {
        try await withDaemon { daemon in
            let watch = try CLIProcess.start(["watch", "--socket", daemon.socketPath])
            defer { watch.cleanup() }
            try await watch.lines(untilPrefix: "-- synced")
            watch.closeOutput()
            try await ok(daemon, "push", "main", "1")
            _ = try await watch.waitForExit()
            #expect(watch.process.terminated == .signaled(SIGPIPE))
        }
    }

    @Test func watchFiltersByPatternAndResumesSince() async throws {
        try await withDaemon { daemon in
            try await ok(daemon, "push", "doc-1", "1")
            try await ok(daemon, "push", "main", "1")
            try await ok(daemon, "push", "doc-2", "1")
            let epoch = try #require(try json(try await ok(daemon, "status", "--json").stdout)["epoch"]?.stringValue)
            let watch = try CLIProcess.start(["watch", "doc-*", "--since", "\(epoch):1", "--socket", daemon.socketPath])
            defer { watch.cleanup() }
            // Resumed after r1: the changes since, for matching scenes only, and no states.
            #expect(try await watch.nextLine() == "r3 change doc-2 v1 [1] (client scenesync)")
            #expect(try await watch.nextLine() == "-- synced at r3 (epoch \(epoch))")
            try await ok(daemon, "push", "main", "2")
            try await ok(daemon, "push", "doc-1", "2")
            #expect(try await watch.nextLine() == "r5 change doc-1 v2 [1, 2] (client scenesync)")

            let stale = try CLIProcess.start(["watch", "--since", "other-epoch:3", "--socket", daemon.socketPath])
            defer { stale.cleanup() }
            #expect(
                try await stale.nextLine()
                    == "-- resync (epoch): daemon restarted without a clean shutdown; current state follows")
            #expect(try await stale.lines(untilPrefix: "-- synced").filter { $0.hasPrefix("state ") }.count == 3)
        }
    }

    @Test func watchJSONIsTheEventsAsReceived() async throws {
        try #require(JQ.path != nil, "jq is not installed (scripts/install-deps.sh test installs it)")
        try await withDaemon { daemon in
            try await ok(daemon, "push", "main", "1")
            let watch = try CLIProcess.start(["watch", "--json", "--socket", daemon.socketPath])
            defer { watch.cleanup() }
            var lines = try await watch.lines(until: { $0.contains(#""event":"synced""#) })
            try await ok(daemon, "push", "main", "2")
            lines.append(try await watch.nextLine())
            watch.signal(SIGINT)
            #expect(try await watch.waitForExit() == 0)
            let events = try await JQ.run(
                #"[.event, .subscription != null] | @text"#, on: lines.joined(separator: "\n"))
            #expect(events.status == 0, "\(events.output)")
            #expect(
                events.output.split(separator: "\n") == [
                    #""[\"state\",true]""#, #""[\"synced\",true]""#, #""[\"change\",true]""#,
                ])
            let change = try json(try #require(lines.last))
            #expect(change["revision"]?.uint64Value == 2)
            #expect(change["path"] == (try json(#"[{"value":1},{"value":2}]"#)))
            #expect(change["origin"]?["client"]?.stringValue == "scenesync")
        }
    }

    /// A clean restart keeps the epoch: `watch` resumes after the last revision it printed, without a resync, and
    /// prints the changes made while the daemon was down (merged from the files at start).
    @Test func watchResumesAcrossACleanRestart() async throws {
        let first = try DaemonProcess()
        defer { first.cleanup() }
        try await first.start()
        try await ok(first, "push", "main", "1")
        let watch = try CLIProcess.start(["watch", "--socket", first.socketPath])
        defer { watch.cleanup() }
        try await watch.lines(untilPrefix: "-- synced at r1")
        try await ok(first, "push", "main", "2")
        #expect(try await watch.nextLine() == "r2 change main v2 [1, 2] (client scenesync)")

        #expect(try await first.stop(SIGTERM) == 0)
        let down = try await watch.lines(untilPrefix: "-- disconnected")
        #expect(down.first == "-- daemon shutting down")
        // Changed while no daemon runs: the next start merges it as a change.
        try first.writeScene("main", "[1,2,3]")

        let second = DaemonProcess(sharing: first)
        defer { second.cleanup() }
        try await second.start()
        let resumed = try await watch.lines(untilPrefix: "-- synced")
        #expect(resumed.first == "-- reconnected, resumed at r2", "\(watch.transcript)")
        // The daemon merges the scenes directory before it listens, so the change is part of the catch-up.
        #expect(resumed.contains("r3 change main v3 [1, 2, 3] (file)"), "\(watch.transcript)")
        #expect(!resumed.contains { $0.hasPrefix("-- resync") || $0.hasPrefix("state ") }, "\(watch.transcript)")

        try await ok(second, "push", "main", "4")
        #expect(try await watch.nextLine() == "r4 change main v4 [1, 2, 3, 4] (client scenesync)")
        watch.signal(SIGINT)
        #expect(try await watch.waitForExit() == 0)
    }

    /// After `kill -9` the daemon starts a new epoch: `watch` says so with a resync (epoch) and prints the current
    /// state, which holds the changes made while it was down, so nothing is missed.
    @Test func watchResyncsAfterKill9() async throws {
        let first = try DaemonProcess()
        defer { first.cleanup() }
        try await first.start()
        try await ok(first, "push", "main", "1")
        let watch = try CLIProcess.start(["watch", "--socket", first.socketPath])
        defer { watch.cleanup() }
        try await watch.lines(untilPrefix: "-- synced at r1")
        try await ok(first, "push", "main", "2")
        #expect(try await watch.nextLine() == "r2 change main v2 [1, 2] (client scenesync)")

        _ = try await first.stop(SIGKILL)
        try await watch.lines(untilPrefix: "-- disconnected")
        try first.writeScene("other", #"["x"]"#)

        let second = DaemonProcess(sharing: first)
        defer { second.cleanup() }
        try await second.start()
        let resynced = try await watch.lines(untilPrefix: "-- synced")
        #expect(resynced.first == "-- reconnected", "\(watch.transcript)")
        #expect(
            resynced.dropFirst().first
                == "-- resync (epoch): daemon restarted without a clean shutdown; current state follows",
            "\(watch.transcript)")
        let states = resynced.filter { $0.hasPrefix("state ") }
        #expect(states.count == 2, "\(watch.transcript)")
        #expect(states.contains { $0.hasPrefix("state main ") && $0.contains("[1, 2]") }, "\(watch.transcript)")
        #expect(states.contains { $0.hasPrefix("state other ") && $0.contains(#"["x"]"#) }, "\(watch.transcript)")

        try await ok(second, "push", "main", "3")
        // The new epoch numbers revisions and versions afresh; the path is what matters.
        let live = try await watch.nextLine()
        #expect(live.contains(" change main v") && live.hasSuffix(" [1, 2, 3] (client scenesync)"), "\(live)")
        watch.signal(SIGTERM)
        #expect(try await watch.waitForExit() == 0)
    }
}
