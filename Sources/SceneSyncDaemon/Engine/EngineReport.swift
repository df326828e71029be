import SceneSyncCore

/// What the engine reports of itself beyond the state: the counts and the last snapshot of `stats` (§6), the
/// moments only tests read, and when the systemd status line goes out.
struct EngineReport {
    /// Scene files that could not be read or were rejected.
    var fileErrors = 0
    var snapshotsWritten = 0
    var lastSnapshot: SnapshotStore.Written? = nil
    /// Reported in `stats` only under test hooks (see ``TestCounters``).
    var testCounters = TestCounters()
    var status = StatusThrottle(interval: .milliseconds(100))
    /// The notices of clients disconnected for not reading: clients cause them, so they are rate-limited.
    var stallNotices = LogRateLimit()

    mutating func noteSnapshot(_ written: SnapshotStore.Written) {
        snapshotsWritten += 1
        lastSnapshot = written
    }

    /// `file_errors`, `snapshots`, `test` (under test hooks) and `last_snapshot` of `stats`.
    func appendStats(to response: inout ResponseWriter, testHooks: Bool) {
        response.append("file_errors", int: fileErrors)
        response.append("snapshots", int: snapshotsWritten)
        if testHooks { response.append("test", json: testCounters.json) }
        guard let lastSnapshot else {
            response.append("last_snapshot", json: Array("null".utf8))
            return
        }
        var object: [UInt8] = Array(#"{"path":"#.utf8)
        JSONWriter.appendString(lastSnapshot.path, to: &object)
        object.append(contentsOf: #","revision":"#.utf8)
        JSONWriter.appendUInt(lastSnapshot.revision, to: &object)
        object.append(contentsOf: #","time":"#.utf8)
        JSONWriter.appendString(lastSnapshot.time, to: &object)
        object.append(contentsOf: #","reason":""#.utf8)
        object.append(contentsOf: lastSnapshot.reason.rawValue.utf8)
        object.append(contentsOf: #""}"#.utf8)
        response.append("last_snapshot", json: object)
    }

    /// The one-line summary for systemd's `STATUS=`.
    func statusLine(scenes: Int, revision: UInt64, subscribers: Int) -> String {
        var line = "\(scenes) scenes, revision \(revision), \(subscribers) subscribers"
        if let lastSnapshot { line += ", last snapshot r\(lastSnapshot.revision) (\(lastSnapshot.reason.rawValue))" }
        return line
    }
}
