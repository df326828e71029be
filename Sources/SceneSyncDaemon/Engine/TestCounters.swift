import SceneSyncCore

/// Moments inside the engine that a test could otherwise only guess by timing: that a client change is waiting for
/// an app's open file, that some requests were one group commit, that a stalled connection was closed.
///
/// Counted always (an increment costs nothing), reported in `stats` as `test` only under test hooks (a test build
/// with `SCENESYNC_TEST_HOOKS=1`), so that the released daemon's answers stay as SPEC §6 lists them.
struct TestCounters {
    /// Group commits of client changes, one per pipeline step whatever its size.
    var groupCommits = 0
    /// Client changes that began to wait for an app to close the scene file it writes in place (§3).
    var writerWaits = 0
    /// Connections closed because their output did not move for `socket.stall_timeout_s`.
    var stallCloses = 0
    /// Snapshot triggers taken (a request, a phase, a signal, the shutdown), coalesced or not.
    var snapshotTriggers = 0
    /// Rescans whose listing of the scenes directory failed (each is retried).
    var rescanFailures = 0
    /// Scene files the start-up merge did not read, because the restored snapshot's index showed them unchanged.
    var unchangedAtStart = 0

    /// `{"group_commits":…,"writer_waits":…,"stall_closes":…,"snapshot_triggers":…,"rescan_failures":…,
    /// "unchanged_at_start":…}`
    var json: [UInt8] {
        var object = Array(#"{"group_commits":"#.utf8)
        JSONWriter.appendUInt(UInt64(groupCommits), to: &object)
        object.append(contentsOf: #","writer_waits":"#.utf8)
        JSONWriter.appendUInt(UInt64(writerWaits), to: &object)
        object.append(contentsOf: #","stall_closes":"#.utf8)
        JSONWriter.appendUInt(UInt64(stallCloses), to: &object)
        object.append(contentsOf: #","snapshot_triggers":"#.utf8)
        JSONWriter.appendUInt(UInt64(snapshotTriggers), to: &object)
        object.append(contentsOf: #","rescan_failures":"#.utf8)
        JSONWriter.appendUInt(UInt64(rescanFailures), to: &object)
        object.append(contentsOf: #","unchanged_at_start":"#.utf8)
        JSONWriter.appendUInt(UInt64(unchangedAtStart), to: &object)
        object.append(UInt8(ascii: "}"))
        return object
    }
}
