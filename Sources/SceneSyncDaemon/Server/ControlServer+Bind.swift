import CRenameAt2
import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

extension ControlServer {
    /// What was bound at the socket path: the exit removes the path only while it is still this socket.
    struct BoundSocket: Sendable {
        var path: String
        var device: UInt64
        var inode: UInt64

        /// Removes the path if it is still the socket bound here, not one another daemon put there since.
        func remove() {
            var st = stat()
            guard lstat(path, &st) == 0, UInt64(st.st_dev) == device, UInt64(st.st_ino) == inode else { return }
            unlink(path)
        }
    }

    /// Binds `path` so that it never exists with a mode other than `mode`: the socket is bound under a temporary
    /// name beside it, given its mode, checked, and moved into place without replacing anything there. Binding at
    /// `path` and changing the mode after would leave a window where the umask decides who may connect; setting
    /// the umask instead would change the mode of every file other threads create meanwhile.
    static func bind(path: String, mode: UInt32, backlog: Int32) throws -> (Int32, BoundSocket) {
        var random = SystemRandomNumberGenerator()
        // Random, not only the pid: daemons in containers that share the directory often have the same pid.
        var temporary = FileSystem.parentDirectory(of: path) + "/.scenesyncd-bind-" + String(random.next(), radix: 36)
        // A Unix socket path holds at most 107 bytes: where the temporary name does not fit, the socket is bound in
        // place and its mode set at once (the window above, but never a wrong mode left behind).
        if temporary.utf8.count > 107 { temporary = path }
        let server = try ListeningSocket.bind(path: temporary, backlog: backlog)
        do throws(SystemError) {
            guard chmod(temporary, mode_t(mode)) == 0 else { throw SystemError("chmod", temporary) }
            var st = stat()
            guard lstat(temporary, &st) == 0 else { throw SystemError("stat", temporary) }
            guard st.st_mode & 0o7777 == mode_t(mode) else { throw SystemError("chmod", temporary, errno: EPERM) }
            if temporary != path { try moveIntoPlace(temporary, path) }
            return (server, BoundSocket(path: path, device: UInt64(st.st_dev), inode: UInt64(st.st_ino)))
        } catch {
            if temporary != path { unlink(temporary) }
            close(server)
            throw ControlServerError("cannot put the socket in place with mode \(String(mode, radix: 8)): \(error)")
        }
    }

    /// Renames without replacing: a socket that appeared at `path` since the start-up check is another daemon's
    /// when something listens on it (an error), else a stale file that is removed before one more try.
    private static func moveIntoPlace(_ temporary: String, _ path: String) throws(SystemError) {
        for attempt in 0..<2 {
            if scenesync_rename2(temporary, path, SCENESYNC_RENAME_NOREPLACE) == 0 { return }
            let error = errno
            switch error {
            case EEXIST where attempt == 0:
                if UnixSocketProbe.isListening(path) { throw SystemError("bind", path, errno: EADDRINUSE) }
                unlink(path)
            case EINVAL, ENOSYS:
                // A file system or kernel without RENAME_NOREPLACE: the start-up check already removed a stale
                // socket and refused a live one, so a plain rename is what is left.
                guard rename(temporary, path) == 0 else { throw SystemError("rename", path) }
                return
            default:
                throw SystemError("rename", path, errno: error)
            }
        }
    }
}
