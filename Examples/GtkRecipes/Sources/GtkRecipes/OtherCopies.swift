#if canImport(Glibc)
import Glibc
#endif

/// Whether other copies of the app are running, for this user on this host.
///
/// A scene's last phase is the daemon's, one per scene: `.active` means that some process showed the window and did
/// not close it. That process crashed, or it is another copy of the app, still running. Every copy holds a shared
/// lock on one file for as long as it runs (the kernel lets go of it however the process ends), so a copy that
/// cannot take the lock exclusively knows that another copy is running.
enum OtherCopies {
    /// Takes this copy's share of the lock and tells whether another copy held one. Call it once, at launch; the
    /// descriptor stays open, and the lock held, until the process ends.
    static func running() -> Bool {
        let directory = getenv("XDG_RUNTIME_DIR").map { String(cString: $0) } ?? "/tmp"
        let file = "\(directory)/\(RecipesApp.scenePrefix)-\(getuid()).lock"
        let descriptor = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            Log.error("cannot open \(file) (\(String(cString: strerror(errno)))): taking other copies as running")
            return true
        }
        let alone = flock(descriptor, LOCK_EX | LOCK_NB) == 0
        _ = flock(descriptor, LOCK_SH)
        return !alone
    }
}
