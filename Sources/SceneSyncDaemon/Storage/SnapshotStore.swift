public import SceneSyncCore
import SceneSyncThreads

#if canImport(Glibc)
import Glibc
#endif

/// Snapshot files in `<state>/snapshots/`: written durably, pruned to the newest `keep`, and read back newest first
/// with a fallback past any that are torn or foreign.
public struct SnapshotStore: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
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
    public func write(_ snapshot: Snapshot, keep: Int) throws(SystemError) -> Written {
        let bytes = snapshot.encode()
        let path = directory + "/" + Snapshot.fileName(revision: snapshot.revision)
        try FileSystem.writeAtomically(
            bytes, to: path, tempName: ".snapshot-\(getpid()).tmp", durable: true, mode: 0o640)
        prune(keep: keep, protecting: path)
        return Written(
            path: path, revision: snapshot.revision, scenes: snapshot.scenes.count, bytes: bytes.count,
            time: snapshot.time, reason: snapshot.reason)
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
