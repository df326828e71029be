#if canImport(Glibc)
import Glibc
#endif

extension PrivatePostgres {
    static let openssl = "/usr/bin/openssl"

    /// A new self-signed CA (P-256, valid two days) in the instance's directory; returns its certificate's path. The
    /// server's own CA is `ca`; a test makes another to offer a client the wrong root.
    @discardableResult
    public func makeCertificateAuthority(named name: String) throws(PrivatePostgresError) -> String {
        try runAsOwner(
            Self.openssl,
            [
                "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "\(directory)/\(name).key", "-out", "\(directory)/\(name).crt", "-days", "2",
                "-subj", "/CN=scenesync test CA \(name)",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        return "\(directory)/\(name).crt"
    }

    /// The CA `ca` and the server's certificate for `localhost` and 127.0.0.1 signed by it, as PostgreSQL wants
    /// them: owned by the server's user, the key readable by it alone.
    func makeServerCertificate() throws(PrivatePostgresError) {
        try makeCertificateAuthority(named: "ca")
        try writeOwnedFile(
            directory + "/server.ext",
            """
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature,keyEncipherment
            extendedKeyUsage=serverAuth
            subjectAltName=DNS:localhost,IP:127.0.0.1

            """, mode: 0o644)
        try runAsOwner(
            Self.openssl,
            [
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", directory + "/server.key", "-out", directory + "/server.csr", "-subj", "/CN=localhost",
            ])
        try runAsOwner(
            Self.openssl,
            [
                "x509", "-req", "-in", directory + "/server.csr", "-CA", caCertificate, "-CAkey", directory + "/ca.key",
                "-set_serial", "2", "-days", "2", "-out", directory + "/server.crt", "-extfile",
                directory + "/server.ext",
            ])
        guard chmod(directory + "/server.key", 0o600) == 0 else { throw .system("chmod server.key", errno) }
    }
}
