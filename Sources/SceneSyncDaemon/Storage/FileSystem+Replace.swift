import CRenameAt2

#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// What a scene file's path held at the instant the daemon replaced or removed it.
    public enum Displaced: Sendable, Equatable {
        /// There was no file.
        case none
        /// A regular file with these bytes (at most the read limit + 1 of them).
        case file([UInt8])
        /// Not known: the file system cannot exchange names, so a plain `rename` replaced whatever was there.
        case unknown
    }

    /// `renameat2(2)`, or a stand-in for tests (a file system that answers `EINVAL`, an app that creates the file
    /// between two calls). Returns 0 or the error number.
    public struct Renamer: Sendable {
        public var rename: @Sendable (_ from: String, _ to: String, _ flags: UInt32) -> Int32

        public init(rename: @escaping @Sendable (_ from: String, _ to: String, _ flags: UInt32) -> Int32) {
            self.rename = rename
        }

        /// With each path's own bytes: passing a `String` to a C parameter copies it into a new array first.
        public static let system = Renamer { from, to, flags in
            from.withCString { from in
                to.withCString { to in scenesync_rename2(from, to, flags) == 0 ? 0 : Glibc.errno }
            }
        }

        static let exchange = UInt32(SCENESYNC_RENAME_EXCHANGE)
        static let noReplace = UInt32(SCENESYNC_RENAME_NOREPLACE)
    }

    /// How often a create that finds a file made meanwhile turns into an exchange with it, and back: each round
    /// needs an app to create or delete the file again within microseconds.
    private static let maxReplaceRounds = 16

    /// Puts `bytes` at `path` (or removes the file when `bytes` is `nil`) and returns what the path held at that
    /// instant, so that an app's write landing between the daemon's last read and this call is never lost (§3).
    ///
    /// The new content is written to `tempName` beside the file, then exchanged with the file in one step
    /// (`RENAME_EXCHANGE`): the displaced file ends up under the temp name, is read, and removed. A missing file is
    /// created with `RENAME_NOREPLACE`, so one an app created meanwhile is exchanged instead of overwritten. A
    /// removal renames the file to the temp name first, for the same reason. Where the file system cannot exchange
    /// (`EINVAL`, as some network and overlay file systems answer, or `ENOSYS` on kernels before 3.15), a plain
    /// `rename` replaces the file and the answer is ``Displaced/unknown``: that is the one case where the window
    /// stays open (docs/guarantees.md). A failure before the rename leaves the old file alone.
    public static func replace(
        _ path: String, with bytes: [UInt8]?, tempName: String, readLimit: Int, renamer: Renamer = .system
    ) throws(SystemError) -> Displaced {
        try replace(
            path, with: bytes, tempPath: parentDirectory(of: path) + "/" + tempName, readLimit: readLimit,
            renamer: renamer, after: nil
        ).displaced
    }

    /// What a replace did: what the path held, and the stamp of the file written (`nil` for a removal, or when the
    /// new file could not be looked at).
    struct Replaced {
        var displaced: Displaced
        var written: WrittenFile.Stamp?
    }

    /// ``replace(_:with:tempName:readLimit:renamer:)`` with the temp file's whole path, in `path`'s directory (the
    /// engine, which writes a scene file with every change, knows both paths without searching `path`), after
    /// `lastWrite`, the file the daemon itself last put at `path`: when the exchange displaces that very file,
    /// unchanged, its bytes are known and it is not read back.
    static func replace(
        _ path: String, with bytes: [UInt8]?, tempPath: String, readLimit: Int, renamer: Renamer = .system,
        after lastWrite: WrittenFile?
    ) throws(SystemError) -> Replaced {
        guard let bytes else {
            return Replaced(
                displaced: try removeCapturing(path, tempPath: tempPath, readLimit: readLimit), written: nil)
        }
        let written = try writeTemp(bytes, to: tempPath, mode: 0o644)
        for _ in 0..<maxReplaceRounds {
            let exchanged = renamer.rename(tempPath, path, Renamer.exchange)
            switch exchanged {
            case 0:
                let displaced = try takeDisplaced(
                    path, tempPath: tempPath, readLimit: readLimit, renamer: renamer, lastWrite: lastWrite)
                return Replaced(displaced: displaced, written: written)
            case ENOENT:
                // No file to exchange with (never made, or an app removed it): create it, unless one appeared.
                let created = renamer.rename(tempPath, path, Renamer.noReplace)
                if created == 0 { return Replaced(displaced: .none, written: written) }
                if created == EEXIST { continue }
                if created == EINVAL || created == ENOSYS {
                    return Replaced(displaced: try plainRename(tempPath, path), written: written)
                }
                unlink(tempPath)
                throw SystemError("rename", path, errno: created)
            case EINVAL, ENOSYS:
                return Replaced(displaced: try plainRename(tempPath, path), written: written)
            default:
                unlink(tempPath)
                throw SystemError("rename", path, errno: exchanged)
            }
        }
        unlink(tempPath)
        throw SystemError("rename", path, errno: EAGAIN)
    }

    /// Creates `path` with `bytes` unless a file is there already (a restore must never overwrite an app's file).
    ///
    /// - Returns: `false` when a file was there (the temp file is removed); `true` when it was created. Without
    ///   `RENAME_NOREPLACE` (`EINVAL`, `ENOSYS`) a plain `rename` creates it, replacing one made that instant.
    public static func createExclusively(
        _ bytes: [UInt8], at path: String, tempName: String, renamer: Renamer = .system
    ) throws(SystemError) -> Bool {
        let tempPath = parentDirectory(of: path) + "/" + tempName
        try writeTemp(bytes, to: tempPath, mode: 0o644)
        let created = renamer.rename(tempPath, path, Renamer.noReplace)
        switch created {
        case 0:
            return true
        case EEXIST:
            unlink(tempPath)
            return false
        case EINVAL, ENOSYS:
            _ = try plainRename(tempPath, path)
            return true
        default:
            unlink(tempPath)
            throw SystemError("rename", path, errno: created)
        }
    }

    /// Writes a whole temp file; on failure it is removed and nothing else changed. Returns the written file's
    /// stamp (``WrittenFile``), `nil` if it could not be looked at.
    @discardableResult
    static func writeTemp(_ bytes: [UInt8], to tempPath: String, mode: mode_t) throws(SystemError) -> WrittenFile.Stamp?
    {
        let fd = tempPath.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode) }
        guard fd >= 0 else { throw SystemError("create", tempPath) }
        var failure: SystemError? = nil
        var info = stat()
        if !writeAll(fd, bytes) { failure = SystemError("write", tempPath) }
        let stamp = failure == nil && fstat(fd, &info) == 0 ? WrittenFile.Stamp(info) : nil
        if close(fd) != 0, failure == nil { failure = SystemError("close", tempPath) }
        if let failure {
            unlink(tempPath)
            throw failure
        }
        return stamp
    }

    private static func plainRename(_ tempPath: String, _ path: String) throws(SystemError) -> Displaced {
        guard rename(tempPath, path) == 0 else {
            let error = SystemError("rename", path)
            unlink(tempPath)
            throw error
        }
        return .unknown
    }

    /// The removal half of ``replace(_:with:tempName:readLimit:renamer:)``: the file is renamed to the temp name
    /// (atomically taking whatever is there), read, and removed.
    private static func removeCapturing(
        _ path: String, tempPath: String, readLimit: Int
    ) throws(SystemError) -> Displaced {
        guard rename(path, tempPath) == 0 else {
            if errno == ENOENT { return .none }
            throw SystemError("remove", path)
        }
        guard let displaced = readDisplaced(tempPath, readLimit: readLimit) else {
            // A directory named like a scene file is none (§3), and `unlink` never removed one: put it back.
            rename(tempPath, path)
            throw SystemError("remove", path, errno: EISDIR)
        }
        unlink(tempPath)
        return displaced
    }

    /// After an exchange: the displaced entry is at `tempPath`. A directory is exchanged back (renaming over one
    /// always failed, and it is not a scene file); anything else is read and removed.
    private static func takeDisplaced(
        _ path: String, tempPath: String, readLimit: Int, renamer: Renamer, lastWrite: WrittenFile? = nil
    ) throws(SystemError) -> Displaced {
        if let lastWrite, isUnchanged(tempPath, since: lastWrite.stamp) {
            tempPath.withCString { _ = unlink($0) }
            return .file(lastWrite.bytes)
        }
        guard let displaced = readDisplaced(tempPath, readLimit: readLimit) else {
            _ = renamer.rename(tempPath, path, Renamer.exchange)
            unlink(tempPath)
            throw SystemError("rename", path, errno: EISDIR)
        }
        tempPath.withCString { _ = unlink($0) }
        return displaced
    }

    /// Whether `path` is a regular file with `stamp`: one `lstat` instead of an open, a read and a close.
    private static func isUnchanged(_ path: String, since stamp: WrittenFile.Stamp) -> Bool {
        var info = stat()
        guard path.withCString({ lstat($0, &info) }) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return WrittenFile.Stamp(info) == stamp
    }

    /// The displaced file's bytes, or `nil` for a directory, which the caller puts back. The new file is in place
    /// already, so a failed read (a symbolic link, which `O_NOFOLLOW` refuses) only means the daemon cannot tell
    /// what it replaced. One open and one `fstat` tell a directory from a file, with no `lstat` of the path first.
    private static func readDisplaced(_ tempPath: String, readLimit: Int) -> Displaced? {
        do throws(SystemError) {
            return try read(tempPath, limit: readLimit).map(Displaced.file) ?? Displaced.none
        } catch {
            return error.errno == EISDIR ? nil : .unknown
        }
    }
}
