/// The daemon a scenario drives: one the bench started (and stops and cleans up), or one already running at
/// `--socket`. Its pid comes from `hello`, so its CPU and memory are read from `/proc` either way.
final class DaemonTarget {
    let socketPath: String
    let scenesDirectory: String?
    let owned: BenchDaemon?
    let pid: Int32

    private init(socketPath: String, scenesDirectory: String?, owned: BenchDaemon?) throws(BenchError) {
        self.socketPath = socketPath
        self.scenesDirectory = scenesDirectory
        self.owned = owned
        let control = try ControlClient(path: socketPath)
        let hello = try control.request("hello", #","client":"scenesync-bench""#)
        guard let pid = hello["pid"]?.uint64Value else { throw BenchError("hello: no pid in the response") }
        self.pid = Int32(truncatingIfNeeded: pid)
    }

    /// Starts a daemon with `config` unless `--socket` names a running one.
    static func prepare(
        _ options: BenchOptions, config: String, filesystem: Filesystem = .tmpfs
    ) throws(BenchError) -> DaemonTarget {
        if let socket = options.daemon.socket {
            return try DaemonTarget(socketPath: socket, scenesDirectory: options.daemon.scenesDirectory, owned: nil)
        }
        let daemon = try BenchDaemon(
            binary: try BenchDaemon.locate(options), config: config, filesystem: filesystem)
        do {
            try daemon.start()
            return try DaemonTarget(
                socketPath: daemon.socketPath, scenesDirectory: daemon.scenesDirectory, owned: daemon)
        } catch {
            daemon.cleanup()
            throw error
        }
    }

    var cpuSeconds: Double { ProcessStats.cpuSeconds(pid) ?? 0 }
    var residentBytes: Int { ProcessStats.residentBytes(pid) }

    /// Stops and removes a daemon the bench started; leaves a running one alone.
    func finish() {
        guard let owned else { return }
        do {
            try owned.stop()
        } catch {
            printError("scenesync-bench: \(error)")
        }
        owned.cleanup()
    }
}
