import Foundation
import SceneSyncCore
import SceneSyncTestKit
import Testing

/// `cluster.postgres` over TCP with TLS against a real PostgreSQL (§9 keys): a private server on
/// 127.0.0.1 with a certificate for `localhost` and 127.0.0.1 signed by a CA made for the test, and a role that logs
/// in with a `scram-sha-256` password, which the hosts read from `cluster.password_file`.
@Suite(.serialized, TestEnvironment.postgres)
struct ClusterTLSTests {
    static let role = "replicator"

    /// A started TLS server, the role with a fresh password (in a password file), and the hosts made by `hosts`
    /// from it, which `body` starts; all of it is stopped and removed when `body` returns or throws.
    static func withTLSServer(
        hostSSLOnly: Bool = false,
        hosts: (PostgresServer) async throws -> [String],
        _ body: (PostgresServer, ClusterHosts, String) async throws -> Void
    ) async throws {
        let server = try await PostgresServer.start(.loopbackTLS(hostSSLOnly: hostSSLOnly))
        defer { server.cleanup() }
        let password = "pw-\(UInt64.random(in: 1...UInt64.max))-secret"
        _ = try await server.query(
            "CREATE ROLE \(role) LOGIN PASSWORD '\(password)'; GRANT CREATE ON DATABASE postgres TO \(role)")
        let passwordFile = server.instance.directory + "/password"
        try "\(password)\n".write(toFile: passwordFile, atomically: false, encoding: .utf8)
        chmod(passwordFile, 0o600)
        let cluster = try ClusterHosts(
            server: server, urls: try await hosts(server), extraConfig: "  password_file: \(passwordFile)")
        defer { cluster.cleanup() }
        try await body(server, cluster, password)
    }

    /// The URL of the TLS listener as the password role.
    static func url(_ server: PostgresServer, _ parameters: String) -> String {
        "postgres://\(role)@127.0.0.1:\(server.port)/postgres?\(parameters)"
    }

    @Test(arguments: ["sslmode=verify-full&sslrootcert=CA", "sslmode=require"])
    func twoHostsReplicateOverTLS(parameters: String) async throws {
        try await Self.withTLSServer(hosts: { server in
            let url = Self.url(server, parameters.replacingOccurrences(of: "CA", with: server.instance.caCertificate))
            return [url, url]
        }) { server, cluster, password in
            try await cluster.startAll()
            let watchers = try await ClusterReplicationTests.subscribers(cluster)
            let writer = try await cluster.hosts[0].connect()
            try await writer.ok("set", ["scene": J.string("tls"), "path": #"[{"value":"over TLS"}]"#])
            let change = try #require(
                try await watchers[1].events { $0.isRemoteChange(of: "tls", from: "hostA") }.last)
            #expect(change["path"] == (try json(#"[{"value":"over TLS"}]"#)))
            #expect(cluster.hosts[1].sceneBytes("tls") == cluster.hosts[0].sceneBytes("tls"))

            // Both hosts are connected as the password role, over TCP, encrypted.
            let sessions = try await server.query(
                "SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s "
                    + "USING (pid) WHERE a.usename = '\(Self.role)' AND a.client_addr = '127.0.0.1'")
            let counts = sessions.split(separator: "|").compactMap { Int($0) }
            #expect(counts.count == 2 && counts[0] == counts[1] && counts[0] >= 2, "sessions: \(sessions)")
            for watcher in watchers {
                let stats = try await watcher.clusterStats()
                #expect(stats["connected"]?.boolValue == true)
                #expect(!stats.text.contains(password))
            }
            for host in cluster.hosts { #expect(!host.stderrText.contains(password)) }
        }
    }

    @Test func aServerCertificateFromAnotherCAIsRefusedAndTheHostWorksAlone() async throws {
        try await Self.withTLSServer(hosts: { server in
            let otherCA = try await server.makeCertificateAuthority(named: "other")
            return [Self.url(server, "sslmode=verify-full&sslrootcert=\(otherCA)")]
        }) { server, cluster, password in
            let host = cluster.hosts[0]
            // Ready, and serving, whatever the database says.
            try await cluster.startAll()
            let client = try await host.connect()
            client.timeout = .seconds(60)
            try await client.subscribe()
            _ = try await client.events(until: "synced")
            let answer = try await client.ok("set", ["scene": J.string("alone"), "path": #"[{"value":1}]"#])
            #expect(host.sceneBytes("alone") == Array("[1]".utf8))
            let warning = try #require(try await client.events { $0.eventName == "warning" }.last)
            #expect(warning["code"]?.stringValue == "cluster_unavailable")
            let stats = try await client.clusterStats()
            #expect(stats["connected"]?.boolValue == false)
            #expect(stats["pending"]?.int64Value == 1)
            // The host never got as far as logging in.
            let sessions = try await server.query(
                "SELECT count(*) FROM pg_stat_activity WHERE usename = '\(Self.role)'")
            #expect(sessions == "0")
            #expect(server.instance.serverLog().contains("could not accept SSL connection"))
            let log = host.stderrText
            #expect(log.contains("cluster database unavailable"), "\(log)")
            for text in [answer.text, warning.text, stats.text, log] { #expect(!text.contains(password)) }
        }
    }

    @Test func aHostSSLOnlyServerRefusesAnUnencryptedHost() async throws {
        try await Self.withTLSServer(
            hostSSLOnly: true,
            hosts: { server in
                [Self.url(server, "sslmode=disable"), Self.url(server, "sslmode=require")]
            }
        ) { server, cluster, password in
            try await cluster.startAll()
            let plain = try await cluster.hosts[0].connect()
            plain.timeout = .seconds(60)
            try await plain.subscribe()
            let warning = try #require(try await plain.events { $0.eventName == "warning" }.last)
            #expect(warning["code"]?.stringValue == "cluster_unavailable")
            #expect(try await plain.clusterStats()["connected"]?.boolValue == false)
            let log = server.instance.serverLog()
            #expect(log.contains("no pg_hba.conf entry for host \"127.0.0.1\", user \"\(Self.role)\""), "\(log)")
            #expect(log.contains("no encryption"))
            // The same server and role over TLS: connected.
            let encrypted = try await cluster.hosts[1].connect()
            #expect(
                try await eventually(timeout: .seconds(60)) {
                    try await encrypted.clusterStats()["connected"]?.boolValue == true
                })
            #expect(try await plain.clusterStats()["connected"]?.boolValue == false)
            for host in cluster.hosts { #expect(!host.stderrText.contains(password)) }
        }
    }
}
