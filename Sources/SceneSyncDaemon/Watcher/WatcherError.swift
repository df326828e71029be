import Glibc

/// Why a scenes directory cannot be watched.
///
/// The daemon prints this as its one-line startup error, so each case names the fix an operator needs rather than
/// only the errno: the inotify limits in particular are sysctls that few people know by name.
public enum WatcherError: Error, CustomStringConvertible, Equatable {
    /// The directory, or a component of its path, does not exist (`ENOENT`).
    case directoryMissing(path: String)
    /// The path exists but is not a directory (`ENOTDIR`).
    case notADirectory(path: String)
    /// The daemon's user may not read the directory (`EACCES`).
    case permissionDenied(path: String)
    /// The user's inotify watch budget is used up (`ENOSPC` from `inotify_add_watch`).
    case watchLimitReached(path: String)
    /// The user's inotify instance budget, or the process's file descriptor budget, is used up (`EMFILE` from
    /// `inotify_init1`; the kernel uses the same errno for both).
    case instanceLimitReached
    /// Any other failure of a system call, with its errno.
    case systemError(operation: String, path: String, errno: Int32)

    public var description: String {
        switch self {
        case .directoryMissing(let path):
            "cannot watch scenes directory \(path): it does not exist (\(Self.text(ENOENT)))"
        case .notADirectory(let path):
            "cannot watch scenes directory \(path): it is not a directory (\(Self.text(ENOTDIR)))"
        case .permissionDenied(let path):
            "cannot watch scenes directory \(path): the daemon's user may not read it (\(Self.text(EACCES)))"
        case .watchLimitReached(let path):
            "cannot watch scenes directory \(path): the inotify watch limit is reached (\(Self.text(ENOSPC))); "
                + "raise the sysctl fs.inotify.max_user_watches"
        case .instanceLimitReached:
            "cannot create an inotify instance: the limit is reached (\(Self.text(EMFILE))); raise the sysctl "
                + "fs.inotify.max_user_instances, or the open file limit (ulimit -n, LimitNOFILE=)"
        case .systemError(let operation, let path, let code):
            "cannot watch scenes directory \(path): \(operation) failed (\(Self.text(code)))"
        }
    }

    /// The error for a failed `inotify_add_watch`, whose errnos mean something specific for a directory watch.
    static func addWatch(path: String, errno code: Int32) -> WatcherError {
        switch code {
        case ENOENT: .directoryMissing(path: path)
        case ENOTDIR: .notADirectory(path: path)
        case EACCES: .permissionDenied(path: path)
        case ENOSPC: .watchLimitReached(path: path)
        default: .systemError(operation: "inotify_add_watch", path: path, errno: code)
        }
    }

    private static func text(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "errno \(code)" }
        return String(cString: message)
    }
}
