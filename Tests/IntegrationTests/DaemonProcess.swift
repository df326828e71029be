import Foundation
import SceneSyncCore
import SceneSyncTestKit
import Testing

/// A real `scenesyncd` on temp directories and a temp socket.
///
/// Readiness is awaited on the daemon's own `READY=1` (a fake `NOTIFY_SOCKET` datagram listener), raced against the
/// daemon's exit, never by sleeping. Exit is awaited through ``ChildProcess``.
final class DaemonProcess: @unchecked Sendable {
    let root: TemporaryDirectory
    var scenes: URL { root.appending("scenes") }
    var state: URL { root.appending("state") }
    var socketPath: String { root.appending("s.sock").path }
    var configFile: URL { root.appending("scenesyncd.yaml") }
    var stderrFile: URL { root.appending("stderr.log") }

    private(set) var process: ChildProcess?
    private(set) var notify: NotifyListener?
    /// Whether this object holds one of the ``DaemonSlots``.
    private var holdsSlot = false
    var extraArguments: [String] = []
    var extraEnvironment: [String: String] = [:]
    /// The binary to run: the build beside the tests (with the test hooks) unless a test asks for another (the packaged one).
    var executable: URL = BuiltProducts.scenesyncd
    /// A command the daemon is started through (it must `exec` it, keeping the pid), such as `setpriv` to start it
    /// without some capabilities; empty for none.
    var launcher: [String] = []

    init(config: String? = nil) throws {
        root = try TemporaryDirectory("ssd")
        try FileManager.default.createDirectory(at: scenes, withIntermediateDirectories: true)
        if let config { try config.write(to: configFile, atomically: true, encoding: .utf8) }
    }

    /// Another daemon on the same directories (for restart tests).
    init(sharing other: DaemonProcess) {
        root = other.root
        extraArguments = other.extraArguments
        extraEnvironment = other.extraEnvironment
        executable = other.executable
        pathsAsFlags = other.pathsAsFlags
    }

    /// Whether the paths are given as flags (the default); a test of what the configuration file's paths do
    /// writes them into the file instead, since flags override the file.
    var pathsAsFlags = true

    /// Whether the daemon gets no flags at all, so that its environment (``extraEnvironment``) and the default
    /// configuration file alone decide; for the tests of what the environment does.
    var withoutFlags = false

    var arguments: [String] {
        if withoutFlags { return extraArguments }
        var arguments =
            pathsAsFlags
            ? ["--scenes-dir", scenes.path, "--state-dir", state.path, "--socket", socketPath, "--log-level", "debug"]
            : ["--log-level", "debug"]
        if FileManager.default.fileExists(atPath: configFile.path) { arguments += ["--config", configFile.path] }
        return arguments + extraArguments
    }

    /// Spawns the daemon without waiting for anything; `blockedSignals` are blocked in it from its first
    /// instruction. ``waitUntilReady(timeout:)`` then waits for `READY=1`.
    @discardableResult
    func launch(blockedSignals: [Int32] = []) throws -> ChildProcess {
        let listener = try NotifyListener(path: root.appending("n.sock").path)
        notify = listener
        var environment = environment
        // A test's own NOTIFY_SOCKET (``extraEnvironment``) wins, as it did before `environment` was shared.
        if extraEnvironment["NOTIFY_SOCKET"] == nil { environment["NOTIFY_SOCKET"] = listener.path }
        let command = launcher + [executable.path] + arguments
        let process = try ChildProcess(
            command[0], Array(command.dropFirst()), environment: environment,
            stdout: .file(stderrFile.path), stderr: .standardOutput, blockedSignals: blockedSignals)
        self.process = process
        return process
    }

    /// The environment the daemon starts in, but for `NOTIFY_SOCKET`: ours without systemd's variables, `HOME` in the
    /// temp directory, the test hooks on, and ``extraEnvironment``.
    var environment: [String: String] {
        var environment = ChildProcess.environment(removing: [
            "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM",
        ])
        environment["SCENESYNC_TEST_HOOKS"] = "1"
        environment["HOME"] = root.path
        environment.merge(extraEnvironment) { $1 }
        return environment
    }

    /// Starts the daemon and waits for `READY=1`. Fails the test if it exits first.
    @discardableResult
    func start(timeout: Duration = .seconds(30)) async throws -> DaemonProcess {
        try await takeSlot()
        try launch()
        try await waitUntilReady(timeout: timeout)
        return self
    }

    /// Waits for the launched daemon's `READY=1`; throws if it exits first or stays silent past `timeout`.
    func waitUntilReady(timeout: Duration = .seconds(30)) async throws {
        guard let process, let listener = notify else { throw DaemonError.notReady(stderr: "never launched") }
        let ready = try await firstOf(
            { try await listener.waitFor("READY=1", timeout: timeout) != nil },
            {
                _ = try await process.exit(timeout: timeout + .seconds(1))
                return false
            })
        guard ready else {
            if let termination = process.terminated {
                throw DaemonError.exitedEarly(termination: termination, stderr: stderrText)
            }
            throw DaemonError.notReady(stderr: stderrText)
        }
    }

    var stderrText: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    var pid: Int32 { process?.pid ?? 0 }

    func signal(_ signal: Int32) {
        process?.signal(signal)
    }

    /// Sends `signal` and waits for the exit status (the signal number if it died of one; see `termination`).
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await stopped(signal, timeout: timeout).status
    }

    /// Sends `signal` and waits for the termination.
    func stopped(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(30)) async throws -> ChildProcess.Termination {
        guard let process else { return .exited(0) }
        process.signal(signal)
        return try await exit(timeout: timeout)
    }

    func waitForExit(timeout: Duration = .seconds(30)) async throws -> Int32 {
        try await exit(timeout: timeout).status
    }

    /// Waits for the daemon to exit; kills it and throws after `timeout`.
    func exit(timeout: Duration = .seconds(30)) async throws -> ChildProcess.Termination {
        guard let process else { return .exited(0) }
        do {
            return try await process.exit(timeout: timeout)
        } catch is WaitTimeout {
            throw DaemonError.didNotExit(stderr: stderrText)
        }
    }

    func connect(timeout: Duration = .seconds(10)) async throws -> SocketClient {
        try await SocketClient.connect(path: socketPath, timeout: timeout)
    }

    /// Writes a scene file the way apps do: a temp file, then rename over.
    func writeScene(_ id: String, _ content: String) throws {
        let temp = scenes.appendingPathComponent(".\(id).json.tmp")
        try Data(content.utf8).write(to: temp)
        guard rename(temp.path, scenes.appendingPathComponent("\(id).json").path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Rewrites a scene file in place (open with truncation, write, close), from a file table of its own: its
    /// close is the last, so the daemon sees it before a later `sync` (see ``PrivateFileTable``).
    func rewriteScene(_ id: String, _ content: String) async throws {
        try await PrivateFileTable.write(Array(content.utf8), toFile: sceneFile(id).path)
    }

    /// Creates the test hook `name` (such as `.scenesync-test-overflow`) in the scenes directory, in place and from
    /// a file table of its own, so that the daemon acts on it before a later `sync`.
    func dropHook(_ name: String) async throws {
        try await PrivateFileTable.write([], toFile: scenes.appendingPathComponent(name).path)
    }

    func readScene(_ id: String) -> String? {
        try? String(contentsOf: scenes.appendingPathComponent("\(id).json"), encoding: .utf8)
    }

    func snapshotFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("snapshots").path)) ?? [])
            .filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".json") }.sorted()
    }

    /// Kills the daemon if it still runs (its waiter thread reaps it) and removes the directories. Synchronous, for
    /// `defer`.
    func cleanup() {
        process?.signal(SIGKILL)
        notify?.stop()
        root.remove()
        if holdsSlot {
            holdsSlot = false
            DaemonSlots.shared.release()
        }
    }

    /// Takes a slot for this object's daemons (once; restarts reuse it). Tests that spawn a daemon without
    /// ``start(timeout:)`` call this first.
    func takeSlot() async throws {
        guard !holdsSlot else { return }
        try await DaemonSlots.shared.acquire()
        holdsSlot = true
    }

    enum DaemonError: Error, CustomStringConvertible {
        case exitedEarly(termination: ChildProcess.Termination, stderr: String)
        case notReady(stderr: String)
        case didNotExit(stderr: String)

        var description: String {
            switch self {
            case .exitedEarly(let termination, let stderr): "scenesyncd ended (\(termination)) before READY:\n\(stderr)"
            case .notReady(let stderr): "scenesyncd did not become ready:\n\(stderr)"
            case .didNotExit(let stderr): "scenesyncd did not exit:\n\(stderr)"
            }
        }
    }
}

/// How many test daemons may run at once. Every daemon holds an inotify instance, and a user may have only
/// `fs.inotify.max_user_instances` of them (128 by default, shared with every other test run of the same user);
/// with the whole suite in parallel, unbounded daemons reach that limit. `SCENESYNC_TEST_DAEMONS` overrides it.
final class DaemonSlots: Sendable {
    static let shared = DaemonSlots(
        limit: ProcessInfo.processInfo.environment["SCENESYNC_TEST_DAEMONS"].flatMap(Int.init) ?? 16)

    let limit: Int
    private let inUse = AsyncVariable(0)

    init(limit: Int) { self.limit = max(limit, 2) }

    func acquire() async throws {
        let limit = limit
        while true {
            let taken = inUse.update { count -> Bool in
                guard count < limit else { return false }
                count += 1
                return true
            }
            if taken { return }
            _ = try await inUse.wait(for: "a free daemon slot (\(limit) daemons run)", until: .now + .seconds(600)) {
                $0 < limit ? true : nil
            }
        }
    }

    func release() {
        inUse.update { $0 -= 1 }
    }
}

/// Runs a one-shot `scenesyncd` (for `--check-config`, `--version`, refused starts) and returns status and output.
///
/// A daemon that starts when it should have refused would never exit: after `timeout` it is killed and the test
/// fails, instead of hanging.
func runScenesyncd(
    _ arguments: [String], environment extra: [String: String] = [:], timeout: Duration = .seconds(30)
) async throws -> (status: Int32, output: String) {
    let environment = ChildProcess.environment(
        removing: ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "JOURNAL_STREAM"],
        adding: extra)
    // A file, not a pipe: nothing to drain while waiting, and no pipe kept open by a runaway daemon.
    let scratch = try TemporaryDirectory("ssdr")
    defer { scratch.remove() }
    let output = scratch.appending("out").path
    let process = try ChildProcess(
        BuiltProducts.scenesyncd.path, arguments, environment: environment, stdout: .file(output))
    let termination: ChildProcess.Termination
    do {
        termination = try await process.exit(timeout: timeout)
    } catch is WaitTimeout {
        throw DaemonProcess.DaemonError.didNotExit(stderr: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }
    return (termination.status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
}
