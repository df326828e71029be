import Foundation
import SceneSyncCore
import SceneSyncTestKit
import Testing

/// A private PostgreSQL cluster for one test: SceneSyncTestKit's ``PrivatePostgres`` (which the cluster benchmark
/// starts too), its blocking steps run on a dedicated thread so that none holds a thread of the cooperative pool.
final class PostgresServer: Sendable {
    let instance: PrivatePostgres
    /// The URL a host's `cluster.postgres` names to reach the server through its Unix socket, as the superuser.
    var url: String { instance.url }
    /// The loopback listener's port (only with `.loopbackTLS`).
    var port: Int { instance.port }

    static var isAvailable: Bool { PrivatePostgres.isAvailable }

    private init(_ instance: PrivatePostgres) {
        self.instance = instance
    }

    /// Creates and starts a cluster; returns once it accepts connections (`pg_ctl -w`).
    static func start(_ listening: PrivatePostgres.Listening = .unixSocketOnly) async throws -> PostgresServer {
        let parent = FileManager.default.temporaryDirectory.path
        return PostgresServer(
            try await blocking("initdb") { () throws(PrivatePostgresError) in
                let instance = try PrivatePostgres(in: parent, listening: listening)
                do throws(PrivatePostgresError) {
                    try instance.start()
                } catch {
                    instance.cleanup()
                    throw error
                }
                return instance
            })
    }

    /// Starts the stopped server again, on the same socket and port.
    func startServer() async throws {
        let instance = instance
        _ = try await Self.blocking("pg_ctl start") { () throws(PrivatePostgresError) in try instance.start() }
    }

    /// `pg_ctl stop`; `immediate` is a crash of the database as far as its clients can tell.
    func stop(immediate: Bool = false) async throws {
        let instance = instance
        try await Self.blocking("pg_ctl stop") { () throws(PrivatePostgresError) in
            try instance.stop(immediate: immediate)
        }
    }

    /// Runs SQL through `psql` and returns its unaligned, tuples-only output (`|` between columns).
    func query(_ sql: String) async throws -> String {
        let instance = instance
        return try await Self.blocking("psql") { () throws(PrivatePostgresError) in try instance.query(sql) }
    }

    /// Another CA than the server's (its certificate's path), to offer a client the wrong root.
    func makeCertificateAuthority(named name: String) async throws -> String {
        let instance = instance
        return try await Self.blocking("openssl") { () throws(PrivatePostgresError) in
            try instance.makeCertificateAuthority(named: name)
        }
    }

    /// Stops the server if it runs and removes its files. Synchronous, for `defer`.
    func cleanup() {
        instance.cleanup()
    }

    private static func blocking<T: Sendable>(
        _ name: String, _ body: @escaping @Sendable () throws(PrivatePostgresError) -> T
    ) async throws -> T {
        try await DedicatedThread.run(name) { Result(catching: body) }.get()
    }
}

/// Several `scenesyncd` hosts on one machine sharing one database (§9), each with its own directories and socket.
final class ClusterHosts: @unchecked Sendable {
    let server: PostgresServer
    var hosts: [DaemonProcess] = []
    let names: [String]

    /// `count` hosts reaching the server through its Unix socket; `extraConfig` is more lines of `cluster:`.
    convenience init(server: PostgresServer, count: Int, extraConfig: String = "") throws {
        try self.init(server: server, urls: Array(repeating: server.url, count: count), extraConfig: extraConfig)
    }

    /// A host per URL, each its `cluster.postgres`.
    init(server: PostgresServer, urls: [String], extraConfig: String = "") throws {
        self.server = server
        names = urls.indices.map { "host\(["A", "B", "C", "D"][$0])" }
        for (name, url) in zip(names, urls) {
            hosts.append(
                try DaemonProcess(
                    config: """
                        socket:
                          heartbeat_s: 3600
                        cluster:
                          postgres: "\(url)"
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
