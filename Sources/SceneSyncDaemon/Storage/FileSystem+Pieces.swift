import CSyncFileRange

#if canImport(Glibc)
import Glibc
#endif

extension FileSystem {
    /// How a file written in pieces takes each piece: `write(2)`, or a stand-in for tests (a disk that fills up
    /// halfway through a snapshot). Returns 0, or the error number.
    struct PieceWriter: Sendable {
        var write: @Sendable (_ fd: Int32, _ piece: [UInt8]) -> Int32

        init(write: @escaping @Sendable (_ fd: Int32, _ piece: [UInt8]) -> Int32) {
            self.write = write
        }

        static let system = PieceWriter { fd, piece in writeAll(fd, piece) ? 0 : Glibc.errno }
    }

    /// How many bytes a durable write in pieces leaves to the kernel before it starts their writeback: a few
    /// pieces' worth, so that the disk is busy while the rest is made, and each request to it is large.
    static let writebackBytes = 4 << 20

    /// Replaces `path` atomically with a file made in pieces: `nextPiece` appends the next piece to the buffer it
    /// is given (emptied, its capacity kept) and returns whether more follow. Each piece is written as soon as it is
    /// made, so the file never sits in memory whole; a durable write also starts the writeback of every
    /// `writebackBytes` written (`sync_file_range`), so that the disk writes the file while the rest of it is made
    /// and the final fsync waits for the last few MB only.
    ///
    /// Otherwise the same steps and outcomes as writing the file in one go: a temp file beside it (a dot-name the
    /// watcher ignores), optionally fsynced, renamed into place, and the directory optionally fsynced. A failure
    /// leaves the old file alone; a temp file written in part is removed.
    ///
    /// - Returns: the file's size.
    static func writeAtomically(
        to path: String, tempName: String, durable: Bool = false, mode: mode_t = 0o644,
        writebackBytes: Int = FileSystem.writebackBytes, writer: PieceWriter = .system,
        pieces nextPiece: (inout [UInt8]) -> Bool
    ) throws(SystemError) -> Int {
        let directory = parentDirectory(of: path)
        let tempPath = directory + "/" + tempName
        let fd = open(tempPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw SystemError("create", tempPath) }
        var failure: SystemError? = nil
        var piece: [UInt8] = []
        var written = 0
        var writebackStart = 0
        var more = true
        while more {
            piece.removeAll(keepingCapacity: true)
            more = nextPiece(&piece)
            let error = writer.write(fd, piece)
            guard error == 0 else {
                failure = SystemError("write", tempPath, errno: error)
                break
            }
            written += piece.count
            if durable, more, written - writebackStart >= writebackBytes {
                // A hint only: whatever fails here fails the fsync below too, which is what decides.
                _ = scenesync_start_writeback(fd, Int64(writebackStart), Int64(written - writebackStart))
                writebackStart = written
            }
        }
        if failure == nil, durable, fsync(fd) != 0 { failure = SystemError("fsync", tempPath) }
        if close(fd) != 0, failure == nil { failure = SystemError("close", tempPath) }
        if let failure {
            unlink(tempPath)
            throw failure
        }
        guard rename(tempPath, path) == 0 else {
            let error = SystemError("rename", path)
            unlink(tempPath)
            throw error
        }
        if durable { try syncDirectory(directory) }
        return written
    }
}
