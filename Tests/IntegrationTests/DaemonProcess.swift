import Foundation
import SceneSyncCore
import Testing

/// A real `scenesyncd` on temp directories and a temp socket.
///
/// Readiness is awaited on the daemon's own `READY=1` (a fake `NOTIFY_SOCKET` datagram listener), never by sleeping.
final class DaemonProcess: @unchecked Sendable {
    let root: TemporaryDirectory
    var scenes: URL { root.appending("scenes") }
    var state: URL { root.appending("state") }
    var socketPath: String { root.appending("s.sock").path }
    var configFile: URL { root.appending("scenesyncd.yaml") }
    var stderrFile: URL { root.appending("stderr.log") }

    private(set) var process: Process?
    private(set) var notify: NotifyListener?
    var extraArguments: [String] = []
    var extraEnvironment: [String: String] = [:]

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
    }

    var arguments: [String] {
        var arguments = [
            "--scenes-dir", scenes.path, "--state-dir", state.path, "--socket", socketPath, "--log-level", "debug",
        ]
        if FileManager.default.fileExists(atPath: configFile.path) { arguments += ["--config", configFile.path] }
        return arguments + extraArguments
    }

    /// Starts the daemon and waits for `READY=1`. Fails the test if it exits first.
    @discardableResult
    func start(timeout: Duration = .seconds(30)) throws -> DaemonProcess {
        let listener = try NotifyListener(path: root.appending("n.sock").path)
        notify = listener
        let process = Process()
        process.executableURL = BuiltProducts.scenesyncd
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for key in ["LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"] {
            environment[key] = nil
        }
        environment["NOTIFY_SOCKET"] = listener.path
        environment["SCENESYNC_TEST_HOOKS"] = "1"
        environment["HOME"] = root.path
        environment.merge(extraEnvironment) { $1 }
        process.environment = environment
        _ = FileManager.default.createFile(atPath: stderrFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: stderrFile)
        handle.seekToEndOfFile()
        process.standardError = handle
        process.standardOutput = handle
        try process.run()
        self.process = process
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let message = listener.receive(timeout: .milliseconds(200)), message.contains("READY=1") { return self }
            if !process.isRunning {
                throw DaemonError.exitedEarly(status: process.terminationStatus, stderr: stderrText)
            }
        }
        throw DaemonError.notReady(stderr: stderrText)
    }

    var stderrText: String { (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? "" }

    var pid: Int32 { process?.processIdentifier ?? 0 }

    func signal(_ signal: Int32) {
        if let process, process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Sends `signal` and waits for the exit status.
    @discardableResult
    func stop(_ signal: Int32 = SIGTERM, timeout: Duration = .seconds(30)) throws -> Int32 {
        guard let process else { return 0 }
        if process.isRunning { kill(process.processIdentifier, signal) }
        return try waitForExit(timeout: timeout)
    }

    func waitForExit(timeout: Duration = .seconds(30)) throws -> Int32 {
        guard let process else { return 0 }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            guard ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw DaemonError.didNotExit(stderr: stderrText)
            }
            // Polling the child's state, not timing the daemon: exit is observed as soon as it happens.
            usleep(2_000)
        }
        return process.terminationStatus
    }

    func connect(timeout: Duration = .seconds(10)) throws -> SocketClient {
        try SocketClient(path: socketPath, timeout: timeout)
    }

    /// Writes a scene file the way apps do: a temp file, then rename over.
    func writeScene(_ id: String, _ content: String) throws {
        let temp = scenes.appendingPathComponent(".\(id).json.tmp")
        try Data(content.utf8).write(to: temp)
        guard rename(temp.path, scenes.appendingPathComponent("\(id).json").path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Rewrites a scene file in place (open with truncation, write, close).
    func rewriteScene(_ id: String, _ content: String) throws {
        let path = scenes.appendingPathComponent("\(id).json").path
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        let bytes = Array(content.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    func readScene(_ id: String) -> String? {
        try? String(contentsOf: scenes.appendingPathComponent("\(id).json"), encoding: .utf8)
    }

    func snapshotFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: state.appendingPathComponent("snapshots").path)) ?? [])
            .filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".json") }.sorted()
    }

    func cleanup() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        root.remove()
    }

    enum DaemonError: Error, CustomStringConvertible {
        case exitedEarly(status: Int32, stderr: String)
        case notReady(stderr: String)
        case didNotExit(stderr: String)

        var description: String {
            switch self {
            case .exitedEarly(let status, let stderr): "scenesyncd exited with \(status) before READY:\n\(stderr)"
            case .notReady(let stderr): "scenesyncd did not become ready:\n\(stderr)"
            case .didNotExit(let stderr): "scenesyncd did not exit:\n\(stderr)"
            }
        }
    }
}

/// Runs a one-shot `scenesyncd` (for `--check-config`, `--version`, refused starts) and returns status and output.
///
/// A daemon that starts when it should have refused would never exit: after `timeout` it is killed and the test
/// fails, instead of hanging.
func runScenesyncd(
    _ arguments: [String], environment extra: [String: String] = [:], timeout: Duration = .seconds(30)
) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = BuiltProducts.scenesyncd
    process.arguments = arguments
    var environment = ProcessInfo.processInfo.environment
    for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "JOURNAL_STREAM"] {
        environment[key] = nil
    }
    environment.merge(extra) { $1 }
    process.environment = environment
    // A file, not a pipe: nothing to drain while waiting, and no pipe kept open by a runaway daemon.
    let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("ssd-\(UUID().uuidString).out")
    guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else { throw POSIXError(.EIO) }
    defer { try? FileManager.default.removeItem(at: outputURL) }
    let output = try FileHandle(forWritingTo: outputURL)
    defer { try? output.close() }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
        if ContinuousClock.now >= deadline {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw DaemonProcess.DaemonError.didNotExit(
                stderr: (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
        }
        usleep(2_000)
    }
    return (process.terminationStatus, (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "")
}
