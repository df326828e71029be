#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL 15 for the cluster scenario: `initdb` in a temp directory on `$TMPDIR`, `pg_ctl start`
/// listening only on a Unix socket there, run as `nobody` when the bench runs as root (PostgreSQL refuses root).
/// Debian's `postgresql` package provides the binaries (`scripts/install-deps.sh test`).
final class BenchPostgres {
    static let binaries = "/usr/lib/postgresql/15/bin"
    static let user = "scenesync"
    let directory: String
    var data: String { directory + "/data" }
    var logPath: String { directory + "/postgres.log" }
    /// Where the socket (`.s.PGSQL.5432`) lives.
    var socketDirectory: String { directory }
    var socketPath: String { directory + "/.s.PGSQL.5432" }
    /// What a host's `cluster.postgres` names.
    var url: String { "postgres://\(Self.user)@/postgres?host=\(socketDirectory)" }
    private var running = false

    /// Creates the cluster (`initdb`); `start()` starts it.
    init() throws(BenchError) {
        guard access(Self.binaries + "/pg_ctl", X_OK) == 0 else {
            throw BenchError("no PostgreSQL 15 in \(Self.binaries): run scripts/install-deps.sh test")
        }
        directory = try BenchDaemon.makeTemporaryDirectory(in: BenchDaemon.root(.disk))
        do throws(BenchError) {
            // The cluster's files belong to its unprivileged user.
            if getuid() == 0, chown(directory, 65534, 65534) != 0 { throw BenchError.system("chown", errno) }
            try run("initdb", ["-D", data, "-U", Self.user, "--auth=trust", "-E", "UTF8", "--no-sync"])
        } catch {
            BenchDaemon.removeTree(directory)
            throw error
        }
    }

    /// `pg_ctl start -w`: returns once the server accepts connections, with the seconds it took.
    @discardableResult
    func start() throws(BenchError) -> Double {
        let options =
            "-c listen_addresses='' -c unix_socket_directories='\(socketDirectory)' -c fsync=off "
            + "-c max_connections=60 -c shared_buffers=16MB"
        let started = Monotonic.now()
        try run("pg_ctl", ["start", "-w", "-t", "60", "-D", data, "-l", logPath, "-o", options])
        running = true
        return Monotonic.seconds(Monotonic.now() - started)
    }

    /// `pg_ctl stop`; `immediate` is a crash of the database as far as its clients can tell.
    func stop(immediate: Bool) throws(BenchError) {
        try run("pg_ctl", ["stop", "-w", "-t", "60", "-D", data, "-m", immediate ? "immediate" : "fast"])
        running = false
    }

    /// Stops the server if it runs and removes its files.
    func cleanup() {
        if running { try? stop(immediate: true) }
        BenchDaemon.removeTree(directory)
    }

    private func run(_ tool: String, _ arguments: [String]) throws(BenchError) {
        let output = directory + "/\(tool).out"
        var argv = [Self.binaries + "/" + tool] + arguments
        if getuid() == 0 { argv = ["/usr/sbin/runuser", "-u", "nobody", "--"] + argv }
        var environment = ["LC_ALL=C.UTF-8"]
        for key in ["PATH", "LD_LIBRARY_PATH", "TZ"] {
            if let value = getenv(key) { environment.append("\(key)=\(String(cString: value))") }
        }
        unlink(output)
        let pid = try BenchDaemon.spawn(argv, environment: environment, output: output)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        guard status == 0 else {
            let text = (try? BenchDaemon.readFile(output)).map { String(decoding: $0.suffix(2000), as: UTF8.self) }
            throw BenchError("\(tool) failed (status \(status)):\n\(text ?? "")")
        }
    }
}
