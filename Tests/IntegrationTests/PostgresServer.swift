import Foundation
import SceneSyncCore
import Testing

/// A private PostgreSQL cluster for one test: `initdb` in a temp directory, `pg_ctl start` listening only on a Unix
/// socket in that directory, run as `nobody` when the tests run as root (PostgreSQL refuses to run as root).
/// Debian's `postgresql` package provides the binaries (`scripts/install-deps.sh test`).
final class PostgresServer: @unchecked Sendable {
    static let binaries = "/usr/lib/postgresql/15/bin"
    let root: TemporaryDirectory
    var data: String { root.path + "/data" }
    var logFile: String { root.path + "/postgres.log" }
    /// Where the socket (`.s.PGSQL.5432`) lives: the URL's `?host=`.
    var socketDirectory: String { root.path }
    /// The URL a host's `cluster.postgres` names.
    var url: String { "postgres://scenesync@/postgres?host=\(socketDirectory)" }

    static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: binaries + "/pg_ctl") }

    private init() throws {
        root = try TemporaryDirectory("pg")
    }

    /// Creates and starts a cluster; waits until it accepts connections (`pg_ctl -w`).
    static func start() async throws -> PostgresServer {
        let server = try PostgresServer()
        if getuid() == 0 {
            // The cluster's files belong to its unprivileged user.
            guard chown(server.root.path, 65534, 65534) == 0 else { throw POSIXError(.EPERM) }
        }
        let initdb = try await server.runAsOwner(
            "initdb", ["-D", server.data, "-U", "scenesync", "--auth=trust", "-E", "UTF8", "--no-sync"])
        guard initdb.status == 0 else { throw ServerError.failed("initdb", initdb.output) }
        try await server.startServer()
        return server
    }

    func startServer() async throws {
        let options =
            "-c listen_addresses='' -c unix_socket_directories='\(socketDirectory)' -c fsync=off "
            + "-c max_connections=60 -c shared_buffers=16MB"
        let result = try await runAsOwner(
            "pg_ctl", ["start", "-w", "-t", "60", "-D", data, "-l", logFile, "-o", options])
        guard result.status == 0 else {
            throw ServerError.failed(
                "pg_ctl start", result.output + ((try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""))
        }
    }

    /// `pg_ctl stop`; `immediate` is a crash of the database as far as its clients can tell.
    func stop(immediate: Bool = false) async throws {
        let result = try await runAsOwner(
            "pg_ctl", ["stop", "-w", "-t", "60", "-D", data, "-m", immediate ? "immediate" : "fast"])
        guard result.status == 0 else { throw ServerError.failed("pg_ctl stop", result.output) }
    }

    /// Runs SQL through `psql` and returns its unaligned, tuples-only output (`|` between columns).
    func query(_ sql: String) async throws -> String {
        let result = try await run(
            Self.binaries + "/psql",
            ["-h", socketDirectory, "-U", "scenesync", "-d", "postgres", "-At", "-v", "ON_ERROR_STOP=1", "-c", sql],
            asOwner: false)
        guard result.status == 0 else { throw ServerError.failed("psql", result.output) }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Stops the server if it runs and removes its files. Synchronous, for `defer`: it signals the postmaster
    /// (`SIGQUIT`, an immediate shutdown) and waits for it to go, on this thread and without the task pool, which
    /// a `defer` must not wait on.
    func cleanup() {
        let pidFile = (try? String(contentsOfFile: data + "/postmaster.pid", encoding: .utf8)) ?? ""
        if let line = pidFile.split(separator: "\n").first, let pid = pid_t(line), pid > 0 {
            kill(pid, SIGQUIT)
            var waited = 0
            while kill(pid, 0) == 0, waited < 1000 {
                usleep(10_000)
                waited += 1
            }
        }
        root.remove()
    }

    private func runAsOwner(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await run(Self.binaries + "/" + tool, arguments, asOwner: true)
    }

    private func run(
        _ executable: String, _ arguments: [String], asOwner: Bool
    ) async throws -> (status: Int32, output: String) {
        let output = root.path + "/cmd.\(UInt64.random(in: 0...UInt64.max)).out"
        var command = executable
        var argv = arguments
        if asOwner, getuid() == 0 {
            command = "/usr/sbin/runuser"
            argv = ["-u", "nobody", "--", executable] + arguments
        }
        let process = try ChildProcess(
            command, argv, environment: ChildProcess.environment(adding: ["LC_ALL": "C.UTF-8"]),
            stdout: .file(output), directory: "/")
        let termination = try await process.exit(timeout: .seconds(90), "\(executable)")
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        unlink(output)
        return (termination.status, text)
    }

    enum ServerError: Error, CustomStringConvertible {
        case failed(String, String)
        var description: String {
            switch self {
            case .failed(let what, let output): "\(what) failed:\n\(output)"
            }
        }
    }
}

/// Several `scenesyncd` hosts on one machine sharing one database (§9), each with its own directories and socket.
final class ClusterHosts: @unchecked Sendable {
    let server: PostgresServer
    var hosts: [DaemonProcess] = []
    let names: [String]

    init(server: PostgresServer, count: Int, extraConfig: String = "") throws {
        self.server = server
        names = (0..<count).map { "host\(["A", "B", "C", "D"][$0])" }
        for name in names {
            hosts.append(
                try DaemonProcess(
                    config: """
                        socket:
                          heartbeat_s: 3600
                        cluster:
                          postgres: "\(server.url)"
                          host: \(name)
                        \(extraConfig)
                        """))
        }
    }

    func startAll() async throws {
        for host in hosts { try await host.start() }
    }

    func cleanup() {
        for host in hosts { host.cleanup() }
    }
}

extension SocketClient {
    /// Reads events until one matches; every event read on the way is returned in order, the match last. Gives
    /// up after `timeout` in all, not only per read: heartbeats would otherwise keep a wait for an event that never
    /// comes alive forever.
    func events(
        timeout: Duration = .seconds(90), matching predicate: (JSONValue) -> Bool
    ) async throws -> [JSONValue] {
        let deadline = ContinuousClock.now + timeout
        var seen: [JSONValue] = []
        while true {
            guard ContinuousClock.now < deadline else {
                throw ClientError.timeout("a matching event within \(timeout); read \(seen.map(\.text))")
            }
            let event = try await nextEvent()
            seen.append(event)
            if predicate(event) { return seen }
        }
    }

    /// The `stats.cluster` object.
    func clusterStats() async throws -> JSONValue {
        let stats = try await ok("stats")
        return try #require(stats["cluster"], "stats has no cluster")
    }
}

extension JSONValue {
    /// Whether this is a `change` event of `scene` from another host named `host`.
    func isRemoteChange(of scene: String, from host: String) -> Bool {
        eventName == "change" && self["scene"]?.stringValue == scene
            && self["origin"]?["source"]?.stringValue == "remote" && self["origin"]?["host"]?.stringValue == host
    }
}
