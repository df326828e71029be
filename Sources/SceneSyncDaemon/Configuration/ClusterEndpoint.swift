/// Where the cluster database is (`cluster.postgres`, §9), parsed and checked when the configuration is loaded, so
/// that a malformed URL stops a start while an unreachable database does not.
public struct ClusterEndpoint: Sendable, Equatable, CustomStringConvertible {
    public enum Transport: Sendable, Equatable {
        case tcp(host: String, port: Int)
        /// The socket file itself: `<directory>/.s.PGSQL.<port>`, as libpq names it.
        case unixSocket(path: String)
    }

    /// `sslmode`; `verify-full` checks the certificate against `sslrootcert` and the host name.
    public enum TLSMode: String, Sendable, Equatable {
        case disable
        case prefer
        case require
        case verifyFull = "verify-full"
    }

    public var transport: Transport
    public var user: String
    public var database: String
    public var tls: TLSMode
    public var rootCertificate: String?

    /// The URL as given: it holds no password, which is never accepted in it.
    public var description: String

    public init(parsing url: String) throws(ConfigurationError) {
        func fail(_ problem: String) -> ConfigurationError {
            ConfigurationError(message: "cluster.postgres: \(problem)")
        }
        let schemes = ["postgres://", "postgresql://"]
        guard let scheme = schemes.first(where: url.hasPrefix) else {
            throw fail("expected a URL like postgres://USER@HOST:PORT/DB, got \"\(url.prefix(60))\"")
        }
        var rest = Substring(url.dropFirst(scheme.count))
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let slash = rest.firstIndex(of: "/") else { throw fail("the URL names no database (…/DB)") }
        let authority = rest[..<slash]
        let database = String(rest[rest.index(after: slash)...])
        guard !database.isEmpty, !database.contains("/") else { throw fail("the URL names no database (…/DB)") }
        guard let at = authority.lastIndex(of: "@") else { throw fail("the URL names no user (postgres://USER@…)") }
        let userInfo = authority[..<at]
        if userInfo.contains(":") {
            throw fail("a password in the URL is not accepted; put it in the file named by cluster.password_file")
        }
        guard !userInfo.isEmpty else { throw fail("the URL names no user (postgres://USER@…)") }
        let hostPort = authority[authority.index(after: at)...]

        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw fail("query parameter \"\(pair)\" has no value") }
            parameters[String(parts[0])] = Self.percentDecoded(parts[1])
        }
        for name in parameters.keys where !["host", "port", "sslmode", "sslrootcert"].contains(name) {
            throw fail("unknown parameter \(name) (host, port, sslmode and sslrootcert are understood)")
        }

        var port = 5432
        var host = String(hostPort)
        if let colon = hostPort.lastIndex(of: ":"), !hostPort.hasSuffix("]") {
            guard let value = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(value) else {
                throw fail("\"\(hostPort[hostPort.index(after: colon)...])\" is not a port number")
            }
            port = value
            host = String(hostPort[..<colon])
        }
        if let text = parameters["port"] {
            guard let value = Int(text), (1...65535).contains(value) else {
                throw fail("\"\(text)\" is not a port number")
            }
            port = value
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let socketDirectory = parameters["host"] {
            guard host.isEmpty else { throw fail("give either a host in the URL or ?host=DIRECTORY, not both") }
            guard socketDirectory.hasPrefix("/") else {
                throw fail("?host= must be an absolute socket directory, like /run/postgresql")
            }
            transport = .unixSocket(path: socketDirectory + "/.s.PGSQL.\(port)")
        } else {
            guard !host.isEmpty else {
                throw fail("the URL names no host (postgres://USER@HOST/DB, or postgres://USER@/DB?host=DIRECTORY)")
            }
            transport = .tcp(host: host, port: port)
        }
        let modeName = parameters["sslmode"] ?? (parameters["host"] == nil ? "prefer" : "disable")
        guard let mode = TLSMode(rawValue: modeName) else {
            throw fail("sslmode \"\(modeName)\" is not one of disable, prefer, require, verify-full")
        }
        if case .unixSocket = transport, mode != .disable {
            throw fail("TLS is not used over a Unix socket; leave sslmode out")
        }
        if mode == .verifyFull, parameters["sslrootcert"] == nil {
            throw fail("sslmode=verify-full needs sslrootcert=FILE, the CA certificate to check the server against")
        }
        if let certificate = parameters["sslrootcert"], !certificate.hasPrefix("/") {
            throw fail("sslrootcert must be an absolute path")
        }
        self.user = Self.percentDecoded(userInfo)
        self.database = Self.percentDecoded(Substring(database))
        self.tls = mode
        self.rootCertificate = parameters["sslrootcert"]
        self.description = url
    }

    private static func percentDecoded(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "%"), iterator.count >= 2,
                let value = UInt8(String(decoding: iterator.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                iterator = iterator.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
