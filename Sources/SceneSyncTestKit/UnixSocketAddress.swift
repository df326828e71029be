#if canImport(Glibc)
public import Glibc
#endif

/// A Unix socket's address for `bind(2)` and `connect(2)`: every test that plays a daemon, a client or systemd's
/// notify socket with raw descriptors needs one, and the C structure takes a few lines to fill.
public enum UnixSocketAddress {
    /// Calls `body` with the address of `path` (cut to the 107 bytes `sun_path` holds) and its length, and returns
    /// what `body` returns: `bind` or `connect` on it.
    public static func with<Result>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in Array(path.utf8).prefix(raw.count - 1).enumerated() { raw[index] = byte }
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
    }
}
