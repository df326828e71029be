#if canImport(Glibc)
import Glibc
#endif

/// A peer server (redis-server, watchman, the inotify relay) the bench starts on a private temp directory, waits
/// for, measures from `/proc` and kills at the end, the way `BenchDaemon` runs scenesyncd.
final class PeerProcess {
    /// How the bench knows the peer serves: its `READY=1` on a private `NOTIFY_SOCKET` (redis-server
    /// `--supervised systemd`, the relay), or, for a peer without one (watchman), a successful connect.
    enum Readiness {
        case notify
        case connects(String)
    }

    let name: String
    let directory: String
    private(set) var pid: Int32 = 0
    private var notifyFD: Int32 = -1
    private var arguments: [String] = []
    private var readiness = Readiness.notify

    var logPath: String { directory + "/\(name).out" }
    private var notifyPath: String { directory + "/n.sock" }

    /// A temp directory on `filesystem` for the peer's sockets, state and data.
    init(name: String, filesystem: Filesystem) throws(BenchError) {
        self.name = name
        directory = try BenchDaemon.makeTemporaryDirectory(in: BenchDaemon.root(filesystem))
    }

    /// Spawns `arguments` (looked up in `PATH`) and waits until the peer is ready; returns the seconds to it.
    @discardableResult
    func start(_ arguments: [String], readiness: Readiness, timeout: Double = 120) throws(BenchError) -> Double {
        guard pid == 0 else { throw BenchError("\(name) is already running") }
        self.arguments = arguments
        self.readiness = readiness
        return try restart(timeout: timeout)
    }

    /// Starts the same command again (after `stop`), on the same directory and data.
    @discardableResult
    func restart(timeout: Double = 120) throws(BenchError) -> Double {
        var environment = ["HOME=\(directory)"]
        for key in ["PATH", "LD_LIBRARY_PATH", "LANG", "TZ"] {
            if let value = getenv(key) { environment.append("\(key)=\(String(cString: value))") }
        }
        if case .notify = readiness {
            if notifyFD < 0 { notifyFD = try BenchDaemon.bindDatagram(notifyPath) }
            environment.append("NOTIFY_SOCKET=\(notifyPath)")
        }
        let started = Monotonic.now()
        pid = try BenchDaemon.spawn(arguments, environment: environment, output: logPath, searchPath: true)
        let deadline = started + Int64(timeout * 1e9)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Monotonic.now() < deadline {
            switch readiness {
            case .notify:
                var descriptor = pollfd(fd: notifyFD, events: Int16(POLLIN), revents: 0)
                if poll(&descriptor, 1, 20) > 0 {
                    let count = buffer.withUnsafeMutableBytes { recv(notifyFD, $0.baseAddress, $0.count, 0) }
                    if count > 0, String(decoding: buffer[0..<count], as: UTF8.self).contains("READY=1") {
                        return Monotonic.seconds(Monotonic.now() - started)
                    }
                    continue
                }
            case .connects(let socket):
                // Refused until the peer listens: tried again until the deadline, whose error names the peer.
                if let fd = try? UnixSocket.connect(socket) {
                    close(fd)
                    return Monotonic.seconds(Monotonic.now() - started)
                }
                // watchman announces nothing: try again shortly (this is the bench, not a test).
                usleep(2000)
            }
            if let status = reap() { throw BenchError("\(name) exited with status \(status):\n\(logTail())") }
        }
        throw BenchError("\(name) was not ready within \(Int(timeout)) s:\n\(logTail())")
    }

    /// SIGTERM; returns the seconds until the process is gone.
    @discardableResult
    func stop(timeout: Double = 120) throws(BenchError) -> Double {
        guard pid != 0 else { return 0 }
        let started = Monotonic.now()
        kill(pid, SIGTERM)
        let deadline = started + Int64(timeout * 1e9)
        while Monotonic.now() < deadline {
            if reap() != nil { return Monotonic.seconds(Monotonic.now() - started) }
            usleep(200)
        }
        kill(pid, SIGKILL)
        _ = reap(blocking: true)
        throw BenchError("\(name) did not exit within \(Int(timeout)) s of SIGTERM")
    }

    /// Kills the peer if it still runs and removes its directory.
    func cleanup() {
        if pid != 0 {
            kill(pid, SIGKILL)
            _ = reap(blocking: true)
        }
        if notifyFD >= 0 { close(notifyFD) }
        notifyFD = -1
        BenchDaemon.removeTree(directory)
    }

    var cpuSeconds: Double { ProcessStats.cpuSeconds(pid) ?? 0 }
    var residentBytes: Int { ProcessStats.residentBytes(pid) }

    private func reap(blocking: Bool = false) -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, blocking ? 0 : WNOHANG) == pid else { return nil }
        pid = 0
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    func logTail() -> String {
        // Only decorates the error being reported: without the output, that error still says what failed.
        guard let bytes = try? BenchDaemon.readFile(logPath) else { return "(no output)" }
        return String(decoding: bytes.suffix(2000), as: UTF8.self)
    }
}
