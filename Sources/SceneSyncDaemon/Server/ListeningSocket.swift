import CSystemd  // <sys/socket.h> constants (SOCK_STREAM, SOCK_NONBLOCK, SOCK_CLOEXEC)
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The control socket's listening descriptor, made here rather than by a NIO server channel: the daemon accepts its
/// connections itself (``ConnectionAcceptor``), so that it knows each one's descriptor.
enum ListeningSocket {
    /// A non-blocking Unix stream socket bound at `path` and listening with `backlog`.
    static func bind(path: String, backlog: Int32) throws(SystemError) -> Int32 {
        let address: SocketAddress
        do {
            address = try SocketAddress(unixDomainSocketPath: path)
        } catch {
            throw SystemError("bind", path, errno: ENAMETOOLONG)
        }
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(AF_UNIX, type, 0)
        guard fd >= 0 else { throw SystemError("socket", path) }
        guard address.withSockAddr({ Glibc.bind(fd, $0, socklen_t($1)) }) == 0 else {
            let error = SystemError("bind", path)
            close(fd)
            throw error
        }
        guard listen(fd, backlog) == 0 else {
            let error = SystemError("listen", path)
            close(fd)
            unlink(path)
            throw error
        }
        return fd
    }

    /// Makes a listening socket passed by systemd non-blocking, as the acceptor needs (``SocketActivation`` checked
    /// already that it is a listening Unix stream socket).
    static func adopt(_ fd: Int32) throws(SystemError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SystemError("fcntl", "socket passed by systemd (fd \(fd))")
        }
    }
}
