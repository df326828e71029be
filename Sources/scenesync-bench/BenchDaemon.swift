import SceneSyncTestKit

#if canImport(Glibc)
import Glibc
#endif

/// A `scenesyncd` the bench starts on temp directories and stops again.
///
/// Scenes and the socket live on a tmpfs (`/dev/shm`, like `/run` where a real deployment keeps them), the state
/// directory on `$TMPDIR` (a disk, like `/var/lib`), so snapshot times include a real `fsync`. Readiness is the
/// daemon's own `READY=1` on a private `NOTIFY_SOCKET`, never a sleep, so start-up times are exact.
final class BenchDaemon {
    let binary: String
    let runtimeRoot: String
    let stateRoot: String
    var scenesDirectory: String { runtimeRoot + "/scenes" }
    var stateDirectory: String { stateRoot + "/state" }
    var socketPath: String { runtimeRoot + "/s.sock" }
    var configPath: String { runtimeRoot + "/scenesyncd.yaml" }
    var logPath: String { runtimeRoot + "/daemon.log" }
    private var notifyPath: String { runtimeRoot + "/n.sock" }

    private(set) var pid: Int32 = 0
    private var notifyFD: Int32 = -1
    private var drain: NotifyDrain? = nil

    /// `sd_notify` datagrams received since the last start (READY=1, STATUS=, STOPPING=1…).
    var notifications: Int { drain?.datagrams ?? 0 }

    /// Creates the directories and writes `config` (YAML) as the daemon's configuration file. The scene files and
    /// the socket go on `filesystem`, the state directory on `$TMPDIR`.
    init(binary: String, config: String, filesystem: Filesystem = .tmpfs) throws(BenchError) {
        self.binary = binary
        runtimeRoot = try Self.makeTemporaryDirectory(in: Self.root(filesystem))
        do {
            stateRoot = try Self.makeTemporaryDirectory(in: Self.root(.disk))
        } catch {
            Self.removeTree(runtimeRoot)
            throw error
        }
        guard mkdir(scenesDirectory, 0o755) == 0 else { throw .system("mkdir \(scenesDirectory)", errno) }
        try Self.writeFile(configPath, Array(config.utf8))
    }

    /// Where temp directories on `filesystem` go: `/dev/shm` when it is writable, else (and for `disk`) `$TMPDIR`.
    static func root(_ filesystem: Filesystem) -> String {
        let temp = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var shm = stat()
        let shared = stat("/dev/shm", &shm) == 0 && access("/dev/shm", W_OK) == 0
        return filesystem == .tmpfs && shared ? "/dev/shm" : temp
    }

    /// Starts the daemon and waits for `READY=1`; returns the seconds from the spawn to it.
    @discardableResult
    func start(timeout: Double = 300) throws(BenchError) -> Double {
        guard pid == 0 else { throw BenchError("the daemon is already running") }
        try openNotifySocket()
        let arguments = [
            binary, "--config", configPath, "--scenes-dir", scenesDirectory, "--state-dir", stateDirectory,
            "--socket", socketPath, "--log-level", "info",
        ]
        // A minimal environment: no systemd variables of our own caller, no SCENESYNCD_* overrides, no user config.
        var environment = ["NOTIFY_SOCKET=\(notifyPath)", "HOME=\(runtimeRoot)"]
        for key in ["PATH", "LD_LIBRARY_PATH", "LANG", "TZ"] {
            if let value = getenv(key) { environment.append("\(key)=\(String(cString: value))") }
        }
        let started = Monotonic.now()
        pid = try Self.spawn(arguments, environment: environment, output: logPath)
        let deadline = started + Int64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Monotonic.now() < deadline {
            var descriptor = pollfd(fd: notifyFD, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 50) > 0 {
                let count = buffer.withUnsafeMutableBytes { recv(notifyFD, $0.baseAddress, $0.count, 0) }
                if count > 0, String(decoding: buffer[0..<count], as: UTF8.self).contains("READY=1") {
                    let elapsed = Monotonic.seconds(Monotonic.now() - started)
                    let drain = NotifyDrain(fd: notifyFD)
                    drain.start()
                    self.drain = drain
                    return elapsed
                }
                continue
            }
            if let status = reap() {
                throw BenchError("scenesyncd exited with status \(status) before READY=1:\n\(logTail())")
            }
        }
        throw BenchError("scenesyncd was not ready within \(Int(timeout)) s:\n\(logTail())")
    }

    /// SIGTERM (a graceful shutdown with its final snapshot); returns the seconds until the process is gone.
    @discardableResult
    func stop(timeout: Double = 300) throws(BenchError) -> Double {
        guard pid != 0 else { return 0 }
        defer { stopDrain() }
        let started = Monotonic.now()
        kill(pid, SIGTERM)
        let deadline = started + Int64(timeout * 1e9)
        while Monotonic.now() < deadline {
            if let status = reap() {
                let elapsed = Monotonic.seconds(Monotonic.now() - started)
                guard status == 0 else { throw BenchError("scenesyncd exited with status \(status):\n\(logTail())") }
                return elapsed
            }
            // Polling the child's state, not pacing the daemon: the exit is seen within 0.2 ms.
            usleep(200)
        }
        kill(pid, SIGKILL)
        _ = reap(blocking: true)
        throw BenchError("scenesyncd did not exit within \(Int(timeout)) s of SIGTERM")
    }

    /// Kills a daemon still running and removes every temp directory.
    func cleanup() {
        if pid != 0 {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
        stopDrain()
        if notifyFD >= 0 { close(notifyFD) }
        notifyFD = -1
        Self.removeTree(runtimeRoot)
        Self.removeTree(stateRoot)
    }

    /// The exit status once the process has ended (a signal number shows as 128 + signal), else `nil`.
    private func reap(blocking: Bool = false) -> Int32? {
        var status: Int32 = 0
        let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
        guard result == pid else { return nil }
        pid = 0
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    private func stopDrain() {
        drain?.stop()
    }

    func logTail() -> String {
        // Only decorates the error being reported: without the log, that error still says what failed.
        guard let bytes = try? Self.readFile(logPath) else { return "(no log)" }
        return String(decoding: bytes.suffix(4000), as: UTF8.self)
    }

    private func openNotifySocket() throws(BenchError) {
        if notifyFD >= 0 { return }
        notifyFD = try Self.bindDatagram(notifyPath)
    }

    /// A datagram socket bound at `path`, to receive `sd_notify` messages on.
    static func bindDatagram(_ path: String) throws(BenchError) -> Int32 {
        var address = try UnixSocket.address(path)
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw .system("bind \(path)", code)
        }
        return fd
    }

    // MARK: - Locating and building scenesyncd

    /// The daemon to run: `--daemon`, else the `scenesyncd` beside this executable. Unless `--no-build`, that one
    /// is built first in the same configuration and scratch path, so that one `swift run … scenesync-bench`
    /// command from a clean clone benchmarks the current sources.
    static func locate(_ options: BenchOptions) throws(BenchError) -> String {
        if let daemon = options.daemon.executable {
            guard access(daemon, X_OK) == 0 else { throw BenchError("--daemon \(daemon) is not an executable") }
            return daemon
        }
        let executable = try ownExecutable()
        let directory = parent(executable)
        let binary = directory + "/scenesyncd"
        // `make bench` builds scenesyncd itself, with the flags of the package's build (a static runtime), and says
        // so: a build here without them would relink it.
        if options.daemon.build, getenv("SCENESYNC_BENCH_PREBUILT") == nil { build(into: directory) }
        guard access(binary, X_OK) == 0 else {
            throw BenchError("no scenesyncd beside \(executable): build it (swift build -c release) or pass --daemon")
        }
        return binary
    }

    /// The path of this executable (the inotify relay peer runs it again).
    static func ownExecutable() throws(BenchError) -> String {
        var link = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &link, link.count - 1)
        guard length > 0 else { throw .system("readlink /proc/self/exe", errno) }
        return String(decoding: link[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The package this executable was built from (its sources' place at build time).
    static var packageRoot: String { parent(parent(parent(#filePath))) }

    /// Runs `swift build --product scenesyncd` for the scratch path and configuration this executable came from
    /// (`<scratch>/<triple>/<configuration>/`). Its output goes to standard error, so `--json` stays clean.
    private static func build(into directory: String) {
        let configuration = base(directory)
        let scratch = parent(parent(directory))
        var info = stat()
        guard configuration == "release" || configuration == "debug",
            stat(packageRoot + "/Package.swift", &info) == 0, stat(scratch + "/" + configuration, &info) == 0
        else { return }
        printError("scenesync-bench: building scenesyncd (\(configuration))…")
        let arguments = [
            "swift", "build", "-c", configuration, "--package-path", packageRoot, "--scratch-path", scratch,
            "--product", "scenesyncd",
        ]
        var environment: [String] = []
        for key in ["PATH", "HOME", "LD_LIBRARY_PATH", "LANG", "TMPDIR", "XDG_CACHE_HOME"] {
            if let value = getenv(key) { environment.append("\(key)=\(String(cString: value))") }
        }
        let child: Int32
        do {
            child = try spawn(arguments, environment: environment, output: nil, searchPath: true)
        } catch {
            printError("scenesync-bench: cannot run swift build (\(error)); using the scenesyncd that is there")
            return
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        if status != 0 { printError("scenesync-bench: swift build failed; using the scenesyncd that is there") }
    }

    /// posix_spawn with standard output and error sent to `output` (appended), or to our standard error when `nil`.
    static func spawn(
        _ arguments: [String], environment: [String], output: String?, searchPath: Bool = false
    ) throws(BenchError) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let output {
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 2, 1)
        }
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: Int32 = 0
        let result =
            searchPath
            ? posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp)
            : posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        guard result == 0 else { throw .system("spawn \(arguments[0])", result) }
        return pid
    }

    // MARK: - Files

    static func makeTemporaryDirectory(in directory: String) throws(BenchError) -> String {
        var template = Array((directory + "/ssb.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw .system("mkdtemp in \(directory)", errno) }
        return String(cString: created)
    }

    static func writeFile(_ path: String, _ bytes: [UInt8]) throws(BenchError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .system("create \(path)", errno) }
        defer { close(fd) }
        guard bytes.withUnsafeBytes({ writeAll(fd, $0) }) else { throw .system("write \(path)", errno) }
    }

    /// `write` until every byte is written; `false` on an error (errno tells which).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += written
        }
        return true
    }

    static func readFile(_ path: String) throws(BenchError) -> [UInt8] {
        guard let bytes = ScratchFiles.read(path) else { throw .system("open \(path)", errno) }
        return bytes
    }

    /// `rm -rf`, without following symbolic links.
    static func removeTree(_ path: String) {
        ScratchFiles.removeTree(path)
    }

    static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func base(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}
