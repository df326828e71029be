import SceneSyncCore

/// What a start learns of the scenes directory while the snapshot is read and decoded: the listing, the daemon's own
/// temp files it removed, and which listed files are still exactly as the scene-file index recorded them.
///
/// None of it needs the decoded store, only the watch (started before, so that no write after the listing is
/// missed) and the index. The index is checked against the snapshot the clean-shutdown marker names, the only one
/// whose epoch and revision the restore can keep; the start-up merge then uses the check only if the restored store
/// has that epoch and revision (``Listing/unchangedDigests(epoch:revision:codec:)``), which is exactly when it would
/// have used the index itself. Otherwise every listed file is read, as after an unclean shutdown.
package struct StartupScan: Sendable {
    /// When the listing began, after the watch started: once the merge is done, every change made before it is in
    /// the store (``SceneFileState`` takes it as the settled moment, see ``SceneFileIndex``).
    let moment: Int64
    /// The listing, or why the directory could not be listed.
    let listing: Result<Listing, SystemError>
    /// How long its steps took, for the log.
    let timings: Timings

    /// The scene files the listing found.
    struct Listing: Sendable {
        /// In directory order, the order they are merged in.
        var files: [SceneID]
        /// The daemon's own temp files a crash left behind, removed right after the listing.
        var removed: [String]
        /// What the files were checked against; `nil` when nothing was (no clean-shutdown marker, or no index of
        /// the snapshot it names).
        var check: Check?

        /// For each of ``files``, the digest of the content the restored snapshot holds for it when the file is
        /// still as the index recorded it; `nil` (read every file) unless the files were checked against an index
        /// of exactly this epoch, revision and codec.
        func unchangedDigests(epoch: String, revision: UInt64, codec: String) -> [UInt64?]? {
            guard let check, check.epoch == epoch, check.revision == revision, check.codec == codec else {
                return nil
            }
            return check.unchanged
        }
    }

    /// The outcome of checking the listed files against one index.
    struct Check: Sendable {
        /// The snapshot and the codec's limits the index was written with.
        var epoch: String
        var revision: UInt64
        var codec: String
        /// Parallel to ``Listing/files``: the recorded digest of a file still as recorded, `nil` for any other.
        var unchanged: [UInt64?]
    }

    /// The steps' times; the index is read while the directory is listed.
    struct Timings: Sendable {
        var listing: Duration
        var index: Duration
        var check: Duration
        var total: Duration
    }
}
