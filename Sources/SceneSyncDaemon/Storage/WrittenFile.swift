import SceneSyncCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A scene file as the daemon wrote it: which file it is and the bytes it put in it. When the daemon's next write
/// of the scene displaces exactly that file, unchanged, what it displaced is known without reading it back.
struct WrittenFile: Sendable {
    /// The file's device, inode, size and modification time (nanoseconds) right after the write. An app that writes
    /// the file in place changes its modification time (and, with the fine-grained timestamps Linux gives a file
    /// whose time was asked for since, always to a later one); one that replaces it makes another inode.
    struct Stamp: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        }
    }

    var stamp: Stamp
    var bytes: [UInt8]
}

/// The last file the daemon wrote for each scene (``WrittenFile``), for whichever thread writes scene files next.
///
/// An entry is not removed when anything else changes the scene's file (an app's write, a removal): its stamp then
/// no longer describes the file in place, so it never matches, and the daemon's next write of the scene replaces it.
/// A failed write removes it.
///
/// Only where the file system gives every write a modification time of its own (``timesAreFine(in:)``): with times
/// of the clock's tick (4 ms here, on kernels before 6.13 everywhere), an app's same-size rewrite in the same tick as
/// the daemon's write would look unchanged, and the read-back exists to catch exactly such a write.
final class LastWrites: Sendable {
    private struct State {
        /// ``timesAreFine(in:)`` of the directory, asked at the first write; until then `nil`.
        var fineTimes: Bool? = nil
        var files: [SceneID: WrittenFile] = [:]
    }

    private let directory: String
    private let state = Mutex(State())

    init(directory: String) {
        self.directory = directory
    }

    func file(of scene: SceneID) -> WrittenFile? {
        state.withLock { state in isKept(&state) ? state.files[scene] : nil }
    }

    func wrote(_ file: WrittenFile, of scene: SceneID) {
        state.withLock { state in
            guard isKept(&state) else { return }
            if state.files.count >= Self.limit, state.files[scene] == nil {
                state.files.remove(at: state.files.startIndex)
            }
            state.files[scene] = file
        }
    }

    /// The most scenes whose last write is kept: an entry holds the bytes written (the store keeps elements, not
    /// file bytes) and about 100 more, and what it saves matters for the scenes written often, which a window or two
    /// of an app are. Past it, one entry makes room for the next, and that scene's next write reads back what it
    /// displaced.
    static let limit = 1024

    /// How many scenes' last writes are kept.
    var count: Int { state.withLock { $0.files.count } }

    func forget(_ scene: SceneID) {
        state.withLock { _ = $0.files.removeValue(forKey: scene) }
    }

    /// Whether last writes are kept at all: the directory is tried at the first call.
    private func isKept(_ state: inout State) -> Bool {
        if let fineTimes = state.fineTimes { return fineTimes }
        let probed = Self.timesAreFine(in: directory)
        state.fineTimes = probed
        return probed
    }

    /// Whether a file in `directory` rewritten right after its time was looked at gets a modification time of its
    /// own: Linux's fine-grained ("multigrain") timestamps, since 6.13 on tmpfs, ext4, XFS and Btrfs. Three
    /// rewrites a few microseconds apart: with times of the clock's tick, one keeping its time is all but certain.
    static func timesAreFine(in directory: String) -> Bool {
        guard let probe = SceneID("timestamp-probe").map({ directory + "/" + EngineCore.tempName($0) }) else {
            return false
        }
        let fd = probe.withCString { open($0, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600) }
        guard fd >= 0 else { return false }
        defer {
            close(fd)
            probe.withCString { _ = unlink($0) }
        }
        var before = stat()
        guard pwrite(fd, "0", 1, 0) == 1, fstat(fd, &before) == 0 else { return false }
        for round in 1...3 {
            var after = stat()
            let byte = UInt8(ascii: "0") + UInt8(round)
            guard withUnsafeBytes(of: byte, { pwrite(fd, $0.baseAddress, 1, 0) }) == 1, fstat(fd, &after) == 0,
                WrittenFile.Stamp(after).modified != WrittenFile.Stamp(before).modified
            else { return false }
            before = after
        }
        return true
    }
}
