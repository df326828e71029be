import Foundation
import Testing

/// An ordinary user's session, as the README's quick start assumes one: a temp `HOME` and `XDG_RUNTIME_DIR`, the
/// built executables on `PATH`, and a daemon started on the per-user defaults, with no flags (in place of `make
/// run`, which would build again).
///
/// Root's defaults are the system's (`/run/scenesync/…`), so under root the session belongs to `nobody`: the daemon
/// and every command run through `setpriv`, from copies of the executables that `nobody` can reach
/// (``ReachableExecutables``), in directories it owns. The daemon's `READY=1` is awaited on a fake `NOTIFY_SOCKET`
/// that the user may write to. Nothing else of the runner's environment reaches the session.
final class UserSession: @unchecked Sendable {
    /// The session's user when the tests run as root.
    static let nobody: UInt32 = 65534

    let root: TemporaryDirectory
    let executables: ReachableExecutables
    var home: String { root.path + "/home" }
    var runtime: String { root.path + "/run" }
    var scenesDirectory: String { runtime + "/scenesync/scenes" }
    var socketPath: String { runtime + "/scenesync/scenesync.sock" }
    var daemonLog: String { root.path + "/scenesyncd.log" }
    /// `setpriv … --` under root, nothing otherwise: what runs a command as the session's user.
    private let asUser: [String]
    private var daemon: ChildProcess?
    private var notify: NotifyListener?
    private var holdsSlot = false

    /// A session with `executables` (the daemon and the CLI at least) on its `PATH`.
    init(executables built: [URL]) throws {
        root = try TemporaryDirectory("uss", in: try ReachableExecutables.base())
        do {
            executables = try ReachableExecutables(built)
            guard chmod(root.path, 0o755) == 0 else { throw ReachableExecutables.Unreachable("chmod \(root.path)") }
            if geteuid() == 0 {
                let setpriv = try #require(HostCommand.find("setpriv"), "setpriv not found (util-linux)")
                asUser = [setpriv, "--reuid=\(Self.nobody)", "--regid=\(Self.nobody)", "--clear-groups", "--"]
            } else {
                asUser = []
            }
            for directory in [home, runtime] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
                guard chmod(directory, 0o700) == 0 else { throw ReachableExecutables.Unreachable("chmod \(directory)") }
                if geteuid() == 0, chown(directory, Self.nobody, Self.nobody) != 0 {
                    throw ReachableExecutables.Unreachable("chown \(directory)")
                }
            }
        } catch {
            root.remove()
            throw error
        }
    }

    /// What every command of the session starts with: a login's variables, nothing of the runner's.
    var environment: [String: String] {
        [
            "PATH": executables.directory.path + ":/usr/local/bin:/usr/bin:/bin",
            "HOME": home,
            "XDG_RUNTIME_DIR": runtime,
            "LANG": "C.UTF-8",
        ]
    }

    /// Starts `executable` (a path) as the session's user, in the session's directory.
    func spawn(
        _ executable: String, _ arguments: [String] = [], environment extra: [String: String] = [:],
        stdin: ChildProcess.Stream = .null, stdout: ChildProcess.Stream = .null,
        stderr: ChildProcess.Stream = .standardOutput, processGroup: Bool = false
    ) throws -> ChildProcess {
        let command = asUser + [executable] + arguments
        return try ChildProcess(
            command[0], Array(command.dropFirst()), environment: environment.merging(extra) { $1 }, stdin: stdin,
            stdout: stdout, stderr: stderr, directory: root.path, processGroup: processGroup)
    }

    /// Starts `scenesyncd` with no arguments and waits for its `READY=1`; throws with its log if it ends first.
    func startDaemon(timeout: Duration = .seconds(60)) async throws {
        if !holdsSlot {
            try await DaemonSlots.shared.acquire()
            holdsSlot = true
        }
        let listener = try NotifyListener(path: root.path + "/notify.sock")
        notify = listener
        guard chmod(listener.path, 0o666) == 0 else { throw ReachableExecutables.Unreachable("chmod notify socket") }
        let process = try spawn(
            executables.path("scenesyncd"), environment: ["NOTIFY_SOCKET": listener.path], stdout: .file(daemonLog))
        daemon = process
        let ready = try await firstOf(
            { try await listener.waitFor("READY=1", timeout: timeout) != nil },
            {
                _ = try await process.exit(timeout: timeout + .seconds(1))
                return false
            })
        guard ready else {
            if let termination = process.terminated {
                throw DaemonProcess.DaemonError.exitedEarly(termination: termination, stderr: daemonText)
            }
            throw DaemonProcess.DaemonError.notReady(stderr: daemonText)
        }
    }

    var daemonText: String { (try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? "" }

    /// Stops the daemon with SIGTERM and returns its exit status.
    func stopDaemon() async throws -> Int32 {
        guard let daemon else { return 0 }
        daemon.signal(SIGTERM)
        return try await daemon.exit(timeout: .seconds(60)).status
    }

    /// Kills what still runs and removes the session's files. Synchronous, for `defer`.
    func cleanup() {
        daemon?.signal(SIGKILL)
        notify?.stop()
        executables.remove()
        root.remove()
        if holdsSlot {
            holdsSlot = false
            DaemonSlots.shared.release()
        }
    }
}
