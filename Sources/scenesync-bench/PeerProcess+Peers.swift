#if canImport(Glibc)
import Glibc
#endif

/// The three peers and how each is started.
extension PeerProcess {
    /// redis-server on a Unix socket only (`--port 0`), no persistence unless asked (`SAVE`), its RDB in its
    /// directory, ready at `READY=1` (after loading that RDB, when there is one).
    static func redis(filesystem: Filesystem) throws(BenchError) -> (PeerProcess, socket: String) {
        try ensureInstalled("redis-server")
        let peer = try PeerProcess(name: "redis-server", filesystem: filesystem)
        let socket = peer.directory + "/redis.sock"
        do throws(BenchError) {
            try peer.start(
                [
                    "redis-server", "--port", "0", "--unixsocket", socket, "--unixsocketperm", "700", "--save", "",
                    "--appendonly", "no", "--dir", peer.directory, "--dbfilename", "dump.rdb", "--supervised",
                    "systemd", "--daemonize", "no", "--maxclients", "10000", "--logfile", peer.directory + "/redis.log",
                ], readiness: .notify)
        } catch {
            peer.cleanup()
            throw error
        }
        return (peer, socket)
    }

    /// watchman in the foreground on a private socket and state file, watching `root` (created, with
    /// `.watchmanconfig` `{"settle": 0}` so that it reports a change as soon as it sees it).
    static func watchman(filesystem: Filesystem) throws(BenchError) -> (PeerProcess, socket: String, root: String) {
        try ensureInstalled("watchman")
        let peer = try PeerProcess(name: "watchman", filesystem: filesystem)
        let socket = peer.directory + "/watchman.sock"
        let root = peer.directory + "/scenes"
        do throws(BenchError) {
            guard mkdir(root, 0o755) == 0 else { throw BenchError.system("mkdir \(root)", errno) }
            try BenchDaemon.writeFile(root + "/.watchmanconfig", Array(#"{"settle": 0}"#.utf8))
            try peer.start(
                [
                    "watchman", "--foreground", "--sockname=\(socket)", "--statefile=\(peer.directory)/state",
                    "--logfile=\(peer.directory)/watchman.log", "--pidfile=\(peer.directory)/pid", "--no-save-state",
                    "--log-level", "0",
                ], readiness: .connects(socket))
            let control = try ControlClient(path: socket)
            try UnixSocket.sendAll(control.fd, Array(#"["watch","\#(root)"]"#.utf8) + [0x0A])
            let answer = try control.readLine()
            guard SubscriberPool.firstRange(of: Array(#""watch":"#.utf8), in: Array(answer)) != nil else {
                throw BenchError("watchman watch failed: \(String(decoding: answer.prefix(300), as: UTF8.self))")
            }
        } catch {
            peer.cleanup()
            throw error
        }
        return (peer, socket, root)
    }

    /// The raw inotify relay (`scenesync-bench inotify-relay`, this executable) watching `root`.
    static func inotifyRelay(filesystem: Filesystem) throws(BenchError) -> (PeerProcess, socket: String, root: String) {
        let peer = try PeerProcess(name: "inotify-relay", filesystem: filesystem)
        let socket = peer.directory + "/relay.sock"
        let root = peer.directory + "/scenes"
        do throws(BenchError) {
            guard mkdir(root, 0o755) == 0 else { throw BenchError.system("mkdir \(root)", errno) }
            try peer.start(
                [try BenchDaemon.ownExecutable(), "inotify-relay", "--directory", root, "--socket", socket],
                readiness: .notify)
        } catch {
            peer.cleanup()
            throw error
        }
        return (peer, socket, root)
    }

    /// Installs the peers through the project's script (`scripts/install-deps.sh bench`) when `command` is not on
    /// `PATH`, so that `--peers` works from a clean clone.
    static func ensureInstalled(_ command: String) throws(BenchError) {
        if onPath(command) { return }
        let script = BenchDaemon.packageRoot + "/scripts/install-deps.sh"
        guard access(script, X_OK) == 0 else {
            throw BenchError("\(command) is not installed (scripts/install-deps.sh bench installs it)")
        }
        printError("scenesync-bench: \(command) is missing; running scripts/install-deps.sh bench…")
        var environment: [String] = []
        for key in ["PATH", "HOME", "LANG"] {
            if let value = getenv(key) { environment.append("\(key)=\(String(cString: value))") }
        }
        let child = try BenchDaemon.spawn([script, "bench"], environment: environment, output: nil)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0, errno == EINTR {}
        guard status == 0, onPath(command) else {
            throw BenchError("scripts/install-deps.sh bench did not install \(command)")
        }
    }

    private static func onPath(_ command: String) -> Bool {
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { access("\($0)/\(command)", X_OK) == 0 }
    }
}
