#if canImport(Glibc)
import Glibc
#endif

/// A private PostgreSQL cluster (15 or newer): `initdb` in a temp directory, `pg_ctl start` on a Unix socket there, run as
/// `nobody` when the caller is root (PostgreSQL refuses to run as root). Debian's `postgresql` package provides the
/// binaries (`scripts/install-deps.sh test`).
///
/// The integration tests and `scenesync-bench cluster` both start one, so it lives here once. Every method blocks
/// until the tool it runs is done: async callers run it on a thread of their own, off the cooperative pool.
public final class PrivatePostgres: @unchecked Sendable {
    /// The superuser `initdb` creates; trusted on the Unix socket.
    public static let user = "scenesync"

    /// Where the server listens besides its Unix socket.
    public enum Listening: Sendable {
        case unixSocketOnly
        /// Also 127.0.0.1 on a free port, with TLS (a certificate for `localhost` and 127.0.0.1 signed by a CA of
        /// the instance's own) and `scram-sha-256` passwords. `hostSSLOnly` refuses unencrypted TCP connections.
        case loopbackTLS(hostSSLOnly: Bool)
    }

    public let directory: String
    /// The server's tools (see ``binaries``).
    let toolDirectory: String
    public let listening: Listening
    /// The port of the loopback listener and the number in the socket's name (`.s.PGSQL.<port>`).
    public private(set) var port: Int
    public var data: String { directory + "/data" }
    public var logPath: String { directory + "/postgres.log" }
    /// Where the socket lives: a URL's `?host=`.
    public var socketDirectory: String { directory }
    public var socketPath: String { directory + "/.s.PGSQL.\(port)" }
    /// The CA certificate (PEM) that signed the server's, for `sslrootcert`; only with `.loopbackTLS`.
    public var caCertificate: String { directory + "/ca.crt" }
    /// What a host's `cluster.postgres` names to reach the server through its Unix socket, as `user`.
    public var url: String {
        "postgres://\(Self.user)@/postgres?host=\(socketDirectory)" + (port == 5432 ? "" : "&port=\(port)")
    }

    /// Creates the cluster (`initdb`, and for `.loopbackTLS` its certificates and `pg_hba.conf`); `start()` starts
    /// it. The directory is made in `parent`.
    public init(in parent: String, listening: Listening = .unixSocketOnly) throws(PrivatePostgresError) {
        guard let binaries = Self.binaries else { throw PrivatePostgresError(Self.unavailableReason) }
        toolDirectory = binaries
        var template = Array((parent + "/pg.XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else { throw .system("mkdtemp in \(parent)", errno) }
        directory = String(cString: created)
        self.listening = listening
        port = 5432
        do throws(PrivatePostgresError) {
            // The cluster's files belong to its unprivileged user.
            if getuid() == 0, chown(directory, Self.nobody, Self.nobody) != 0 { throw .system("chown", errno) }
            try runAsOwner(
                toolDirectory + "/initdb",
                [
                    "-D", data, "-U", Self.user, "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8",
                    "--no-sync",
                ])
            if case .loopbackTLS(let hostSSLOnly) = listening {
                try makeServerCertificate()
                let tcp = hostSSLOnly ? "hostssl" : "host"
                try writeOwnedFile(
                    data + "/pg_hba.conf",
                    "local all all trust\n\(tcp) all all 127.0.0.1/32 scram-sha-256\n", mode: 0o600)
            }
        } catch {
            ScratchFiles.removeTree(directory)
            throw error
        }
    }

    /// `pg_ctl start -w`: returns once the server accepts connections, with the seconds it took.
    @discardableResult
    public func start() throws(PrivatePostgresError) -> Double {
        let started = Self.now()
        var attempt = 0
        while true {
            if case .loopbackTLS = listening, attempt > 0 || port == 5432 { port = try Self.freeLoopbackPort() }
            do throws(PrivatePostgresError) {
                try runAsOwner(
                    toolDirectory + "/pg_ctl",
                    ["start", "-w", "-t", "60", "-D", data, "-l", logPath, "-o", serverOptions()])
                return Self.now() - started
            } catch {
                // Another process may have taken the free port between the probe and the bind: try another.
                attempt += 1
                guard case .loopbackTLS = listening, attempt < 3, serverLog().contains("could not bind") else {
                    throw PrivatePostgresError(error.description + "\n" + String(serverLog().suffix(2000)))
                }
            }
        }
    }

    /// `pg_ctl stop`; `immediate` is a crash of the database as far as its clients can tell.
    public func stop(immediate: Bool = false) throws(PrivatePostgresError) {
        try runAsOwner(
            toolDirectory + "/pg_ctl", ["stop", "-w", "-t", "60", "-D", data, "-m", immediate ? "immediate" : "fast"])
    }

    /// Runs SQL through `psql` on the Unix socket as the superuser and returns its unaligned, tuples-only output
    /// (`|` between columns).
    public func query(_ sql: String) throws(PrivatePostgresError) -> String {
        let output = try run(
            toolDirectory + "/psql",
            [
                "-X", "-h", socketDirectory, "-p", "\(port)", "-U", Self.user, "-d", "postgres", "-At", "-v",
                "ON_ERROR_STOP=1", "-c", sql,
            ], asOwner: false)
        var text = Substring(output)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }

    /// The server's log so far (empty if there is none yet).
    public func serverLog() -> String {
        String(decoding: ScratchFiles.read(logPath) ?? [], as: UTF8.self)
    }

    /// Stops the server if it runs and removes its files. It signals the postmaster (`SIGQUIT`, an immediate
    /// shutdown) rather than running `pg_ctl`, so that it works whatever state a failed test left, and waits up
    /// to 10 s for it to go.
    public func cleanup() {
        let pidFile = String(decoding: ScratchFiles.read(data + "/postmaster.pid") ?? [], as: UTF8.self)
        if let line = pidFile.split(separator: "\n").first, let pid = pid_t(line), pid > 0 {
            kill(pid, SIGQUIT)
            var waited = 0
            while kill(pid, 0) == 0, waited < 1000 {
                usleep(10_000)
                waited += 1
            }
        }
        ScratchFiles.removeTree(directory)
    }

    private func serverOptions() -> String {
        var options =
            "-c unix_socket_directories='\(socketDirectory)' -c port=\(port) -c fsync=off -c max_connections=60 "
            + "-c shared_buffers=16MB"
        switch listening {
        case .unixSocketOnly:
            options += " -c listen_addresses=''"
        case .loopbackTLS:
            options +=
                " -c listen_addresses='127.0.0.1' -c ssl=on -c ssl_cert_file='\(directory)/server.crt'"
                + " -c ssl_key_file='\(directory)/server.key'"
        }
        return options
    }

    static let nobody: uid_t = 65534
}
