public import SceneSyncCore
import SceneSyncThreads

#if canImport(Glibc)
import Glibc
#endif

/// Snapshot files in `<state>/snapshots/`: written durably, pruned to the newest `keep`, and read back newest first
/// with a fallback past any that are torn or foreign.
public struct SnapshotStore: Sendable {
    public let directory: String
    /// About how many bytes of a snapshot are encoded before they are written: enough that each write is large,
    /// small enough that the buffer stays in the cache and the disk gets the first bytes early.
    let pieceBytes: Int
    /// How many bytes are written before their writeback is started (see ``FileSystem/writebackBytes``).
    let writebackBytes: Int
    /// `write(2)`, or a test's stand-in.
    let writer: FileSystem.PieceWriter

    public init(directory: String) {
        self.init(directory: directory, pieceBytes: 1 << 20, writebackBytes: FileSystem.writebackBytes, writer: .system)
    }

    /// Smaller pieces and a stand-in writer let a test cross pieces and fail between them with a few scenes.
    init(directory: String, pieceBytes: Int, writebackBytes: Int, writer: FileSystem.PieceWriter) {
        self.directory = directory
        self.pieceBytes = pieceBytes
        self.writebackBytes = writebackBytes
        self.writer = writer
    }

    /// What the `snapshot` op and the `snapshot` event report.
    public struct Written: Sendable, Equatable {
        public var path: String
        public var revision: UInt64
        public var scenes: Int
        public var bytes: Int
        public var time: String
        public var reason: Snapshot.Reason
    }

    /// Writes a snapshot: temp file, fsync, rename, fsync of the directory. A failure leaves every existing
    /// snapshot in place (a torn temp file is removed and never renamed over a good one).
    ///
    /// The document is encoded in pieces of about ``pieceBytes``, each written as soon as it is encoded into the
    /// one buffer they share: the disk writes the start of a large snapshot while the rest is encoded, and the
    /// whole document is never in memory.
    public func write(_ snapshot: SnapshotEncoder, keep: Int) throws(SystemError) -> Written {
        var encoder = snapshot
        let path = directory + "/" + Snapshot.fileName(revision: snapshot.revision)
        // Room for a piece and the entry that takes it past its size, most of the time; a larger entry grows it.
        let capacity = pieceBytes + pieceBytes / 8
        let bytes = try FileSystem.writeAtomically(
            to: path, tempName: ".snapshot-\(getpid()).tmp", durable: true, mode: 0o640, writebackBytes: writebackBytes,
            writer: writer
        ) { piece in
            piece.reserveCapacity(capacity)
            return encoder.encodeNext(into: &piece, upTo: pieceBytes)
        }
        prune(keep: keep, protecting: path)
        return Written(
            path: path, revision: snapshot.revision, scenes: snapshot.sceneCount, bytes: bytes, time: snapshot.time,
            reason: snapshot.reason)
    }

    /// Removes all but the newest `keep` snapshots. Failures are harmless: an extra old snapshot costs disk only, is
    /// never restored while a newer one reads, and the next snapshot's prune lists and removes it again.
    func prune(keep: Int, protecting newest: String) {
        guard let names = try? snapshotNames() else { return }  // harmless, as said above
        for name in names.dropFirst(max(1, keep)) where directory + "/" + name != newest {
            try? FileSystem.remove(directory + "/" + name)  // harmless, as said above
        }
    }

    /// Snapshot file names, newest revision first.
    func snapshotNames() throws(SystemError) -> [String] {
        try FileSystem.list(directory).compactMap { name in Snapshot.revision(fromFileName: name).map { (name, $0) } }
            .sorted { $0.1 > $1.1 }.map(\.0)
    }

    /// The outcome of looking for a snapshot to restore.
    public struct Loaded: Sendable {
        public var snapshot: Snapshot
        public var path: String
    }

    /// The newest readable snapshot, or `nil` when there is none (first start). Unreadable ones, and a directory
    /// that cannot be listed, are reported in `skipped` so the caller can log them and start a new epoch.
    public func loadNewest() -> (loaded: Loaded?, skipped: [(path: String, reason: String)]) {
        var skipped: [(path: String, reason: String)] = []
        let names: [String]
        do throws(SystemError) {
            names = try snapshotNames()
        } catch {
            // The snapshots may be there: reported like an unreadable one, so the restore logs it rather than
            // taking it for a first start.
            return (nil, [(directory, "cannot list the snapshots: \(error)")])
        }
        for name in names {
            let path = directory + "/" + name
            do {
                guard let bytes = try FileSystem.read(path) else { continue }
                // On every core: decoding is most of a start with many scenes, and nothing else runs yet.
                let snapshot = try Snapshot.decode(bytes) { chunks, body in
                    PosixThread.concurrentMap(count: chunks, named: "ssd-restore", body)
                }
                guard Snapshot.fileName(revision: snapshot.revision) == name else {
                    skipped.append((path, "file name does not match its revision \(snapshot.revision)"))
                    continue
                }
                return (Loaded(snapshot: snapshot, path: path), skipped)
            } catch {
                skipped.append((path, "\(error)"))
            }
        }
        return (nil, skipped)
    }
}
