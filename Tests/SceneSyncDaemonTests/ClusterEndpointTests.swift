import Testing

@testable import SceneSyncDaemon

@Suite struct ClusterEndpointTests {
    @Test func aTCPURLWithTLS() throws {
        let endpoint = try ClusterEndpoint(
            parsing: "postgres://scene%40sync@db.example.net:5433/scenes?sslmode=verify-full&sslrootcert=/etc/ca.pem")
        #expect(endpoint.transport == .tcp(host: "db.example.net", port: 5433))
        #expect(endpoint.user == "scene@sync")
        #expect(endpoint.database == "scenes")
        #expect(endpoint.tls == .verifyFull)
        #expect(endpoint.rootCertificate == "/etc/ca.pem")
    }

    @Test func aUnixSocketDirectory() throws {
        let endpoint = try ClusterEndpoint(parsing: "postgresql://scenesync@/scenesync?host=/run/postgresql")
        #expect(endpoint.transport == .unixSocket(path: "/run/postgresql/.s.PGSQL.5432"))
        #expect(endpoint.tls == .disable)
        let other = try ClusterEndpoint(parsing: "postgres://u@/d?host=/tmp/pg&port=6000")
        #expect(other.transport == .unixSocket(path: "/tmp/pg/.s.PGSQL.6000"))
    }

    @Test func tcpDefaultsToPortAndPreferredTLS() throws {
        let endpoint = try ClusterEndpoint(parsing: "postgres://u@localhost/d")
        #expect(endpoint.transport == .tcp(host: "localhost", port: 5432))
        #expect(endpoint.tls == .prefer)
        let v6 = try ClusterEndpoint(parsing: "postgres://u@[::1]:7000/d")
        #expect(v6.transport == .tcp(host: "::1", port: 7000))
    }

    @Test(arguments: [
        ("http://u@h/d", "expected a URL"),
        ("postgres://u:pw@h/d", "password in the URL"),
        ("postgres://h/d", "no user"),
        ("postgres://u@h", "no database"),
        ("postgres://u@h:99999/d", "port"),
        ("postgres://u@/d", "no host"),
        ("postgres://u@h/d?host=/run", "either a host"),
        ("postgres://u@/d?host=relative", "absolute"),
        ("postgres://u@h/d?sslmode=maybe", "sslmode"),
        ("postgres://u@h/d?sslmode=verify-full", "sslrootcert"),
        ("postgres://u@/d?host=/run&sslmode=require", "Unix socket"),
        ("postgres://u@h/d?application=x", "unknown parameter"),
    ])
    func malformedURLsAreConfigurationErrors(url: String, expected: String) {
        #expect {
            try ClusterEndpoint(parsing: url)
        } throws: { error in
            let message = (error as? ConfigurationError)?.message ?? ""
            return message.contains(expected) && !message.contains("pw@")
        }
    }
}
