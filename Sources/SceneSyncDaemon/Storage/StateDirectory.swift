import SceneSyncCore

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's durable bookkeeping in `state.directory`: the exclusive lock, the revision high-water mark and the
/// clean-shutdown marker that lets a restart keep its epoch.
///
/// Continuity rule: the epoch survives only when the previous run left a clean-shutdown marker naming exactly the
/// snapshot being restored. The marker is removed as soon as a run starts, so a crash (no marker) or a fallback to
/// an older snapshot (marker names another revision) always starts a new epoch.
public final class StateDirectory: Sendable {
    public let path: String
    public let snapshotsPath: String
    private let lockDescriptor: Int32

    /// How many revisions one durable reservation covers: the high-water mark is written once per block, never
    /// per change.
    public static let revisionBlock: UInt64 = 4096

    /// Takes the exclusive lock; a second daemon on the same directory fails here, before touching anything.
    public init(path: String) throws(StateDirectoryError) {
        self.path = path
        self.snapshotsPath = path + "/snapshots"
        do throws(SystemError) {
            try FileSystem.makeDirectory(path, mode: 0o750)
            try FileSystem.makeDirectory(snapshotsPath, mode: 0o750)
        } catch {
            throw .unusable("\(error)")
        }
        let lockPath = path + "/lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o640)
        guard fd >= 0 else { throw .unusable("\(SystemError("open", lockPath))") }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            // The holder's pid only adds to the error: without it, the error still says the directory is locked.
            let holder = (try? FileSystem.read(lockPath, limit: 64)).flatMap { $0 }.map {
                String(decoding: $0, as: UTF8.self).trimmingWhitespace()
            }
            close(fd)
            throw .locked(path: path, holder: holder.flatMap { $0.isEmpty ? nil : $0 })
        }
        // Record our pid for the error message a second daemon prints.
        _ = ftruncate(fd, 0)
        _ = FileSystem.writeAll(fd, Array("\(getpid())\n".utf8))
        lockDescriptor = fd
    }

    deinit { close(lockDescriptor) }

    // MARK: - Clean-shutdown marker

    /// What a clean shutdown leaves behind.
    public struct CleanShutdown: Sendable, Equatable {
        public var epoch: String
        public var revision: UInt64
    }

    private var markerPath: String { path + "/clean-shutdown" }

    /// Reads and removes the marker. Removing it durably before serving is what makes a later crash detectable.
    public func takeCleanShutdownMarker() throws(StateDirectoryError) -> CleanShutdown? {
        let bytes: [UInt8]?
        do throws(SystemError) {
            bytes = try FileSystem.read(markerPath, limit: 4096)
            if bytes != nil {
                try FileSystem.remove(markerPath)
                try FileSystem.syncDirectory(path)
            }
        } catch {
            throw .unusable("\(error)")
        }
        // A damaged marker proves no clean shutdown: the restore then starts a new epoch, as after a crash.
        guard let bytes, let json = try? JSONParser.parse(bytes), let epoch = json["epoch"]?.stringValue,
            let revision = json["revision"]?.uint64Value
        else { return nil }
        return CleanShutdown(epoch: epoch, revision: revision)
    }

    public func writeCleanShutdownMarker(_ marker: CleanShutdown) throws(SystemError) {
        var out: [UInt8] = Array(#"{"epoch":"#.utf8)
        JSONWriter.appendString(marker.epoch, to: &out)
        out.append(contentsOf: #","revision":"#.utf8)
        JSONWriter.appendUInt(marker.revision, to: &out)
        out.append(contentsOf: "}\n".utf8)
        try FileSystem.writeAtomically(out, to: markerPath, tempName: ".clean-shutdown.tmp", durable: true, mode: 0o640)
    }

    // MARK: - Revision high-water mark

    private var highWaterPath: String { path + "/revision" }

    /// Where the newest snapshot's ``SceneFileIndex`` is kept.
    var sceneFileIndexPath: String { path + "/scene-files.index" }

    /// The highest revision any run may have handed out; `nil` when none was recorded (a new state directory, or
    /// one whose mark was lost).
    ///
    /// A mark that exists but cannot be read or parsed is an error, never a zero: counting it as 0 could hand out
    /// again a revision that was already given before a crash (§4).
    public func highWaterMark() throws(StateDirectoryError) -> UInt64? {
        let bytes: [UInt8]?
        do throws(SystemError) {
            bytes = try FileSystem.read(highWaterPath, limit: 64)
        } catch {
            throw .unusable("cannot read the revision high-water mark: \(error)")
        }
        guard let bytes else { return nil }
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespace()
        guard let mark = UInt64(text) else {
            throw .unusable(
                "the revision high-water mark \(highWaterPath) holds \(text.isEmpty ? "nothing" : "\"\(text.prefix(40))\"")"
                    + ", not a revision; restore it from a backup, or remove the state directory to start afresh")
        }
        return mark
    }

    /// Removes what the daemon's own atomic writes left behind when it crashed mid-write: only the names it uses
    /// itself (`.revision.tmp`, `.clean-shutdown.tmp`, `.scene-files.tmp`, `snapshots/.snapshot-<pid>.tmp`), nothing
    /// else (§5).
    public func removeLeftoverTempFiles() -> [String] {
        var removed: [String] = []
        for name in [".revision.tmp", ".clean-shutdown.tmp", SceneFileIndex.tempName]
        where unlink(path + "/" + name) == 0 {
            removed.append(path + "/" + name)
        }
        // A listing failure leaves them for the next start (no temp name is ever read as a snapshot); the restore
        // has logged it already, from `SnapshotStore.loadNewest()`, which lists this directory just before.
        for name in (try? FileSystem.list(snapshotsPath)) ?? [] where Self.isSnapshotTempName(name) {
            if unlink(snapshotsPath + "/" + name) == 0 { removed.append(snapshotsPath + "/" + name) }
        }
        return removed
    }

    /// `.snapshot-<digits>.tmp`
    static func isSnapshotTempName(_ name: String) -> Bool {
        guard name.hasPrefix(".snapshot-"), name.hasSuffix(".tmp") else { return false }
        let digits = name.dropFirst(".snapshot-".count).dropLast(".tmp".count)
        return !digits.isEmpty && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
    }

    /// Durably reserves revisions up to `mark` before any of them is handed out.
    public func reserve(upTo mark: UInt64) throws(SystemError) {
        try FileSystem.writeAtomically(
            Array("\(mark)\n".utf8), to: highWaterPath, tempName: ".revision.tmp", durable: true, mode: 0o640)
    }

    /// A new, unique epoch: time and randomness, so that two runs never share one even on a clock reset.
    public static func newEpoch() -> String {
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() & 0xFFFF_FFFF, radix: 16)
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return String(now.tv_sec, radix: 36) + "-" + String(repeating: "0", count: 8 - suffix.count) + suffix
    }
}

public enum StateDirectoryError: Error, Sendable, Equatable, CustomStringConvertible {
    case unusable(String)
    case locked(path: String, holder: String?)

    public var description: String {
        switch self {
        case .unusable(let reason): "state directory unusable: \(reason)"
        case .locked(let path, let holder):
            "another scenesyncd is already running on state directory \(path)"
                + (holder.map { " (pid \($0))" } ?? "")
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var scalars = Substring(self)
        while let first = scalars.first, first.isWhitespace { scalars = scalars.dropFirst() }
        while let last = scalars.last, last.isWhitespace { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
