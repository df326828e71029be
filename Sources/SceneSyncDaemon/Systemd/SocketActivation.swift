import CSystemd

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The listening sockets systemd passed in (`LISTEN_FDS`, `LISTEN_PID`, `LISTEN_FDNAMES`), read as
/// `sd_listen_fds_with_names` reads them but from an environment passed in, so that every case can be tested without
/// changing the environment of the running process, which other threads read concurrently.
///
/// **An inherited socket is never unlinked.** Its path belongs to the socket unit: systemd keeps listening on it
/// while the daemon restarts and hands the same descriptor to the next instance. A daemon that removed the path on
/// shutdown would leave systemd holding a socket that no client can find until the socket unit is restarted.
///
/// The environment is left in place, as ``SystemdNotifier`` does: `LISTEN_PID` already makes child processes ignore
/// it, and every call here sees the same sockets.
public enum SocketActivation {
    /// One descriptor systemd passed, with its `FileDescriptorName=`.
    public struct InheritedSocket: Sendable, Equatable {
        public var fileDescriptor: Int32
        /// `nil` when systemd passed no names (`LISTEN_FDNAMES` unset). libsystemd reports `unknown` then, which
        /// would be indistinguishable from a socket really named so.
        public var name: String?

        public init(fileDescriptor: Int32, name: String?) {
            self.fileDescriptor = fileDescriptor
            self.name = name
        }
    }

    /// The `FileDescriptorName=` of the control socket in `scenesyncd.socket`.
    public static let controlSocketName = "control"

    /// Every descriptor passed to this process by `environment`, the one the daemon was started with; empty when
    /// none were, or when the variables cannot be parsed (``controlSocket(environment:)`` reports that case as an
    /// error).
    public static func inheritedSockets(environment: [String: String]) -> [InheritedSocket] {
        // Not lost: the daemon calls `controlSocket(environment:)` first, which reports the same error.
        (try? listenedSockets(environment: environment)) ?? []
    }

    /// The descriptor to serve the socket protocol on, or `nil` when systemd passed none and the daemon binds its
    /// own socket.
    ///
    /// With names, the one named ``controlSocketName``; without names, the only one. It must be a listening Unix
    /// stream socket, and it is made close-on-exec so that no child process inherits it.
    public static func controlSocket(environment: [String: String]) throws(SocketActivationError) -> Int32? {
        guard let socket = try select(from: listenedSockets(environment: environment)) else { return nil }
        try validate(socket.fileDescriptor)
        return socket.fileDescriptor
    }

    /// The passed descriptors, each made close-on-exec as `sd_listen_fds` does, so that no child process started
    /// before the daemon picks its socket inherits one.
    static func listenedSockets(environment: [String: String]) throws(SocketActivationError) -> [InheritedSocket] {
        let sockets = try passedSockets(environment: environment, pid: getpid())
        for socket in sockets { try makeCloseOnExec(socket.fileDescriptor) }
        return sockets
    }

    /// A descriptor `LISTEN_FDS` counts that is not open means the environment does not describe this process's
    /// descriptors, so it is reported as such, as `sd_listen_fds` does.
    static func makeCloseOnExec(_ fd: Int32) throws(SocketActivationError) {
        let flags = fcntl(fd, F_GETFD)
        guard flags >= 0 else { throw .invalidEnvironment(errno: errno) }
        guard flags & FD_CLOEXEC == 0 else { return }
        guard fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 else { throw .invalidEnvironment(errno: errno) }
    }

    /// Picks the control socket from what was passed; the rules of ``controlSocket(environment:)``, without touching any
    /// descriptor.
    static func select(from sockets: [InheritedSocket]) throws(SocketActivationError) -> InheritedSocket? {
        guard !sockets.isEmpty else { return nil }
        let names = sockets.compactMap(\.name)
        if !names.isEmpty {
            guard let control = sockets.first(where: { $0.name == controlSocketName }) else {
                throw .noControlSocket(names: names)
            }
            return control
        }
        guard sockets.count == 1, let only = sockets.first else { throw .ambiguous(count: sockets.count) }
        return only
    }

    /// A wrong descriptor (a datagram socket, a TCP port, a socket that is not listening) would make the daemon
    /// fail later in an obscure way; this says what is wrong before anything is served.
    static func validate(_ fd: Int32) throws(SocketActivationError) {
        let isUnixStream = sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0)
        guard isUnixStream >= 0 else { throw .unusable(fileDescriptor: fd, errno: -isUnixStream) }
        guard isUnixStream > 0 else { throw .notAListeningUnixStreamSocket(fileDescriptor: fd) }
        let flags = fcntl(fd, F_GETFD)
        guard flags >= 0, fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0 else {
            throw .unusable(fileDescriptor: fd, errno: errno)
        }
    }
}

/// Why the sockets systemd passed cannot be used. Each is a configuration mistake in the socket unit, so the daemon
/// reports it and exits rather than falling back to a socket of its own that no client would look for.
public enum SocketActivationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `LISTEN_PID`, `LISTEN_FDS` or `LISTEN_FDNAMES` is set but malformed, or a descriptor it names is not open.
    case invalidEnvironment(errno: Int32)
    /// Names were passed, but none is ``SocketActivation/controlSocketName``.
    case noControlSocket(names: [String])
    /// Several unnamed descriptors, so there is no telling which one is the control socket.
    case ambiguous(count: Int)
    /// The descriptor is not a listening `AF_UNIX` `SOCK_STREAM` socket.
    case notAListeningUnixStreamSocket(fileDescriptor: Int32)
    /// The descriptor could not be inspected or made close-on-exec.
    case unusable(fileDescriptor: Int32, errno: Int32)

    public var description: String {
        switch self {
        case .invalidEnvironment(let code):
            "socket activation: LISTEN_FDS is not usable: \(String(cString: strerror(code)))"
        case .noControlSocket(let names):
            "socket activation: no socket named \"\(SocketActivation.controlSocketName)\" among "
                + "\(names.joined(separator: ", ")); set FileDescriptorName=\(SocketActivation.controlSocketName)"
        case .ambiguous(let count):
            "socket activation: \(count) unnamed sockets passed; name the control socket "
                + "FileDescriptorName=\(SocketActivation.controlSocketName)"
        case .notAListeningUnixStreamSocket(let fd):
            "socket activation: descriptor \(fd) is not a listening Unix stream socket (use ListenStream=/path)"
        case .unusable(let fd, let code):
            "socket activation: descriptor \(fd): \(String(cString: strerror(code)))"
        }
    }
}
