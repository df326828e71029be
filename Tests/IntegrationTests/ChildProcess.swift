import Foundation
import SceneSyncTestKit

/// A child process started with `posix_spawn`, whose exit is awaited without blocking the cooperative pool: a
/// dedicated thread sits in `waitpid` for it from the start and publishes the termination, and tasks await that.
///
/// Not Foundation's `Process`: the tests need what it does not offer (a signal mask for the child, the exact
/// moment of the spawn), and every child closes every inherited descriptor beyond its standard ones, so that a test
/// running in parallel never leaks a pipe or a socket into another test's child (which would hold it open).
final class ChildProcess: @unchecked Sendable {
    enum Termination: Sendable, Equatable, CustomStringConvertible {
        case exited(Int32)
        case signaled(Int32)

        /// The exit status, or the signal number for a death by signal (what `Process.terminationStatus` gave).
        var status: Int32 {
            switch self {
            case .exited(let status), .signaled(let status): status
            }
        }

        var description: String {
            switch self {
            case .exited(let status): "exit status \(status)"
            case .signaled(let signal): "killed by signal \(signal)"
            }
        }
    }

    /// Where a standard stream of the child goes.
    enum Stream: Sendable {
        case null
        /// A file, opened for reading (standard input) or created and appended to (output).
        case file(String)
        /// A descriptor of ours, duplicated into the child.
        case descriptor(Int32)
        /// Standard error only: wherever standard output goes.
        case standardOutput
    }

    let pid: pid_t
    let executable: String
    private let termination = AsyncVariable<Termination?>(nil)

    /// Spawns `executable` with `arguments`. `environment` replaces ours; `blockedSignals` are blocked in the child
    /// from its first instruction (every other signal is unblocked and at its default action, as under systemd).
    /// With `processGroup`, the child leads a process group of its own, which ``signalGroup(_:)`` signals whole:
    /// for a shell whose background jobs outlive it.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String],
        stdin: Stream = .null, stdout: Stream = .null, stderr: Stream = .standardOutput,
        directory: String? = nil, blockedSignals: [Int32] = [], processGroup: Bool = false
    ) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .null:
                posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                let flags = fd == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND
                posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0o644)
            case .descriptor(let own):
                posix_spawn_file_actions_adddup2(&actions, own, fd)
            case .standardOutput:
                posix_spawn_file_actions_adddup2(&actions, 1, fd)
            }
        }
        guard SpawnActions.closeFrom(&actions, 3) == 0 else {
            throw SpawnError("posix_spawn_file_actions_addclosefrom_np")
        }
        if let directory {
            guard SpawnActions.changeDirectory(&actions, directory) == 0 else {
                throw SpawnError("posix_spawn_file_actions_addchdir_np")
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in blockedSignals { sigaddset(&mask, signal) }
        posix_spawnattr_setsigmask(&attributes, &mask)
        // Signals the test runner ignores (SIGPIPE) would stay ignored across exec: reset every one to default.
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if processGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw SpawnError("posix_spawn \(executable): \(String(cString: strerror(result)))") }
        self.pid = pid

        let termination = termination
        let child = pid
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 {
                guard errno == EINTR else {
                    // Not ours to reap (it cannot happen: only this thread waits for this pid). Report it as an
                    // exit so that no waiter hangs.
                    termination.update { $0 = .exited(-1) }
                    return
                }
            }
            let signal = status & 0x7f
            termination.update { $0 = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal) }
        }
        thread.name = "waitpid \(child)"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    /// The termination, once it happened.
    var terminated: Termination? { termination.value }

    var isRunning: Bool { termination.value == nil }

    /// Sends `signal` unless the child has already exited (its pid may belong to someone else by then).
    func signal(_ signal: Int32) {
        if isRunning { kill(pid, signal) }
    }

    /// Sends `signal` to every process of the group the child leads (started with `processGroup`), the child's own
    /// background jobs among them, whether or not the child itself still runs: the group's ID stays taken, so not
    /// reused, while any of them lives.
    func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// Waits for the child to exit; `nil` when it still runs after `timeout` (and it is left running).
    func termination(within timeout: Duration) async throws -> Termination? {
        do {
            return try await termination.wait(for: "", until: .now + timeout) { $0 }
        } catch is WaitTimeout {
            return nil
        }
    }

    /// Waits for the child to exit. At the deadline the child is killed and ``WaitTimeout`` is thrown.
    func exit(timeout: Duration, _ what: @autoclosure () -> String = "") async throws -> Termination {
        do {
            return try await termination.wait(
                for: "\(executable) (pid \(pid)) to exit\(what().isEmpty ? "" : ": " + what())",
                until: .now + timeout
            ) { $0 }
        } catch let timeout as WaitTimeout {
            signal(SIGKILL)
            throw timeout
        }
    }

    /// The environment children get: ours, without what would make a test depend on how the runner was started.
    static func environment(removing keys: [String] = [], adding extra: [String: String] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in keys { environment[key] = nil }
        environment.merge(extra) { $1 }
        return environment
    }

    struct SpawnError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

/// A pipe whose ends are closed on exec (children get only what they are given explicitly).
func makePipe() throws -> (read: Int32, write: Int32) {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw ChildProcess.SpawnError("pipe: \(String(cString: strerror(errno)))") }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    return (fds[0], fds[1])
}
