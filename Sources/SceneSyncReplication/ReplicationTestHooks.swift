import SceneSyncDaemon

#if canImport(Glibc)
import Glibc
#endif

/// Faults of the replicator that a test cannot cause from outside, played while a file exists in the state
/// directory. Only test builds with `SCENESYNC_TEST_HOOKS=1` have them; elsewhere every path is `nil`.
struct ReplicationTestHooks: Sendable {
    /// The background flush of the journal fails, as after a write-back error.
    var failJournalSync: String? = nil
    /// A session's work hangs, ignoring cancellation, as a query stuck inside the database client would.
    var hangSession: String? = nil
    /// The journal's writer holds its turns, so that lines stay queued, as they are for a moment after a change.
    var holdJournalWriter: String? = nil

    init(stateDirectory: String) {
        #if SCENESYNC_TEST_HOOKS
        guard getenv("SCENESYNC_TEST_HOOKS").map({ String(cString: $0) }) == "1" else { return }
        failJournalSync = stateDirectory + "/.scenesync-test-fail-journal-sync"
        hangSession = stateDirectory + "/.scenesync-test-hang-session"
        holdJournalWriter = stateDirectory + "/.scenesync-test-hold-journal-writer"
        #endif
    }

    static func exists(_ path: String?) -> Bool {
        path.map { access($0, F_OK) == 0 } ?? false
    }

    /// Waits while the hook `path` exists, in steps on the daemon's blocking executor, which no cancellation cuts
    /// short.
    static func wait(whileExists path: String?, on io: BlockingIO) async {
        while exists(path) {
            await io.run { _ = usleep(20_000) }
        }
    }
}
