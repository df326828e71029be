import Synchronization

#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A failed system call, with the errno text the log and the client see.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var path: String
    public var errno: Int32

    public init(_ operation: String, _ path: String, errno: Int32 = Glibc.errno) {
        self.operation = operation
        self.path = path
        self.errno = errno
    }

    public var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno)))"
    }
}

/// Thin, blocking wrappers over the system calls the daemon needs, with exact errno reporting.
///
/// Scene files are small and local; a direct `read`/`write` is faster and more predictable than Foundation's
/// file APIs, and it lets the daemon distinguish "missing" from "unreadable" precisely.
public enum FileSystem {
    /// Opens `path` for ``read(_:limit:)``: non-blocking, so that a FIFO named like a scene file cannot stop the
    /// engine's thread in `open`, and without updating the file's access time. With `relatime`, the first read of
    /// every file an app renames into place would otherwise change its inode again, a journal transaction on a disk
    /// file system. Only the file's owner (or a process with `CAP_FOWNER`) may ask that: a daemon reading an other
    /// user's files is refused once, and reads as everyone does from then on.
    static func openForReading(_ path: String) -> Int32 {
        let flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        if asksNoAccessTime.load(ordering: .relaxed) {
            let fd = path.withCString { open($0, flags | noAccessTime) }
            guard fd < 0, errno == EPERM else { return fd }
            asksNoAccessTime.store(false, ordering: .relaxed)
        }
        return path.withCString { open($0, flags) }
    }

    /// `O_NOATIME`, which Swift's Glibc module does not export (it is `_GNU_SOURCE`); the same value on every Linux
    /// architecture the package is built for.
    static let noAccessTime: Int32 = 0o1_000_000

    /// Whether reads still ask for `O_NOATIME` (see ``openForReading(_:)``).
    static let asksNoAccessTime = Atomic<Bool>(true)

    /// The file's bytes, `nil` when it does not exist. Reads at most `limit + 1` bytes so that an oversized file is
    /// noticed without reading all of it.
    public static func read(_ path: String, limit: Int = .max) throws(SystemError) -> [UInt8]? {
        let fd = openForReading(path)
        if fd < 0 {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw SystemError("open", path)
        }
        defer { close(fd) }
        var st = stat()
        var chunk = 4096
        var regularSize = -1
        if fstat(fd, &st) == 0 {
            let type = st.st_mode & S_IFMT
            if type == S_IFDIR { throw SystemError("read", path, errno: EISDIR) }
            // A FIFO, socket or device holds no file content; reading one could wait for a writer, or never end.
            if type != S_IFREG { throw SystemError("read (not a regular file)", path, errno: EINVAL) }
            // One read for the common case: the whole file (or just past the limit) in a buffer of its size. A
            // regular file gets exactly that (the array is kept as the result, so a 200-byte scene must not hold
            // 4 KiB); files that report no size (procfs) get a page.
            let size = Int(st.st_size)
            if (st.st_mode & S_IFMT) == S_IFREG, size > 0 {
                regularSize = size
                chunk = min(size + 1, limit == .max ? size + 1 : limit + 1)
            } else {
                chunk = max(chunk, min(size + 1, limit == .max ? size + 1 : limit + 1))
                if (st.st_mode & S_IFMT) == S_IFREG { regularSize = size }
            }
        }
        var buffer = [UInt8](repeating: 0, count: min(chunk, 1 << 20))
        var result: [UInt8] = []
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw SystemError("read", path)
            }
            if count == 0 { return result }
            if result.isEmpty, count < buffer.count {
                buffer.removeLast(buffer.count - count)
                result = buffer
                // A regular file that gave exactly the size fstat reported, with room to spare, is read: the read
                // that would return 0 is skipped (a file that grew meanwhile gives more and goes on).
                if count == regularSize { return result }
                buffer = [UInt8](repeating: 0, count: 4096)
            } else {
                result.append(contentsOf: buffer[0..<count])
            }
            if result.count > limit { return result }
        }
    }

    /// Replaces `path` atomically: writes a temp file beside it (a dot-name the watcher ignores), optionally
    /// fsyncs it, renames it into place, and optionally fsyncs the directory. A failure leaves the old file alone.
    public static func writeAtomically(
        _ bytes: [UInt8], to path: String, tempName: String, durable: Bool = false, mode: mode_t = 0o644
    ) throws(SystemError) {
        // One piece: the buffer takes the bytes themselves, not a copy.
        _ = try writeAtomically(to: path, tempName: tempName, durable: durable, mode: mode) { piece in
            piece = bytes
            return false
        }
    }

    /// Writes all of `bytes` to `fd`, going on after short writes and `EINTR`.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += written
            }
            return true
        }
    }

    /// Which file a path names now (device and inode): tells a directory that was replaced from the one it was.
    public struct Identity: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
    }

    /// The identity of what `path` names now; `nil` when nothing is there (or it cannot be read).
    public static func identity(of path: String) -> Identity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    public static func syncDirectory(_ directory: String) throws(SystemError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw SystemError("fsync", directory) }
    }

    /// Removes a file; a file that is already gone is not an error.
    public static func remove(_ path: String) throws(SystemError) {
        if unlink(path) != 0, errno != ENOENT { throw SystemError("unlink", path) }
    }

    /// Names in a directory, without `.` and `..`.
    public static func list(_ directory: String) throws(SystemError) -> [String] {
        guard let dir = opendir(directory) else { throw SystemError("opendir", directory) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Creates a directory and its parents; checks that an existing one is a directory we can write.
    public static func makeDirectory(_ path: String, mode: mode_t) throws(SystemError) {
        var st = stat()
        if stat(path, &st) == 0 {
            guard (st.st_mode & S_IFMT) == S_IFDIR else { throw SystemError("use directory", path, errno: ENOTDIR) }
            guard access(path, R_OK | W_OK | X_OK) == 0 else { throw SystemError("use directory", path) }
            return
        }
        let parent = parentDirectory(of: path)
        if parent != path, parent != "/", parent != "." { try makeDirectory(parent, mode: 0o755) }
        if mkdir(path, mode) != 0, errno != EEXIST { throw SystemError("mkdir", path) }
    }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
