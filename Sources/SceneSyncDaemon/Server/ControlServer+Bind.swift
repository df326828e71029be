import NIOCore
import NIOPosix
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension ControlServer {
    /// Binds `path` so that it never exists with a mode other than `mode`: the socket is bound under a temporary
    /// name beside it, given its mode, checked, and renamed into place. Binding at `path` and changing the mode
    /// after would leave a window where the umask decides who may connect; setting the umask instead would change
    /// the mode of every file other threads create meanwhile.
    static func bind<Output: Sendable>(
        _ bootstrap: ServerBootstrap, path: String, mode: UInt32,
        childChannelInitializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Output>
    ) async throws -> NIOAsyncChannel<Output, Never> {
        let directory = FileSystem.parentDirectory(of: path)
        var temporary = directory + "/.scenesyncd-bind-\(getpid())"
        // A Unix socket path holds at most 107 bytes: where the temporary name does not fit, the socket is bound in
        // place and its mode set at once (the window above, but never a wrong mode left behind).
        if temporary.utf8.count > 107 { temporary = path }
        unlink(temporary)
        let server = try await bootstrap.bind(
            unixDomainSocketPath: temporary, childChannelInitializer: childChannelInitializer)
        do throws(SystemError) {
            guard chmod(temporary, mode_t(mode)) == 0 else { throw SystemError("chmod", temporary) }
            var st = stat()
            guard stat(temporary, &st) == 0 else { throw SystemError("stat", temporary) }
            guard st.st_mode & 0o7777 == mode_t(mode) else {
                throw SystemError("chmod", temporary, errno: EPERM)
            }
            if temporary != path, rename(temporary, path) != 0 { throw SystemError("rename", path) }
        } catch {
            unlink(temporary)
            try? await server.channel.close()  // the error that matters is the one thrown below
            throw ControlServerError("cannot give the socket its mode \(String(mode, radix: 8)): \(error)")
        }
        return server
    }
}

/// The control socket cannot be set up as configured.
struct ControlServerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
